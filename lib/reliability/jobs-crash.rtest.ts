import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { runJobsCrash } from "./jobs-crash";

const dir = mkdtempSync(path.join(os.tmpdir(), "reconcile-jobs-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("jobs on one SQLite file, two worker processes, four SIGKILLs mid-work: every job done, each result recorded once", async () => {
  const report = await runJobsCrash({ url: `file:${path.join(dir, "jobs.db")}`, processes: 2, jobs: 400, kills: 4 });
  console.log(JSON.stringify({ ...report, recordedTwice: report.recordedTwice.length, notRecorded: report.notRecorded.length }));
  expect(report.recordedTwice).toEqual([]);
  expect(report.notRecorded).toEqual([]);
  expect(report.done).toBe(report.jobs);
});
