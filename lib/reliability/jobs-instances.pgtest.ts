import { beforeAll, expect, it } from "vitest";
import { runJobsCrash } from "./jobs-crash";
import { resetPublicSchema } from "@/lib/testing/drop-database";

const url = process.env.RELIABILITY_DATABASE_URL!;

beforeAll(async () => {
  await resetPublicSchema(url);
}, 60_000);

it("jobs on one PostgreSQL, three worker processes claiming at once, four SIGKILLs mid-work: every job done, each result recorded once", async () => {
  const report = await runJobsCrash({ url, processes: 3, jobs: 600, kills: 4 });
  console.log(JSON.stringify({ ...report, recordedTwice: report.recordedTwice.length, notRecorded: report.notRecorded.length }));
  expect(report.recordedTwice).toEqual([]);
  expect(report.notRecorded).toEqual([]);
  expect(report.done).toBe(report.jobs);
});
