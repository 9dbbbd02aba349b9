import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { runCrashTrials } from "./crash";

const dir = mkdtempSync(path.join(os.tmpdir(), "reconcile-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("20 SIGKILLs under concurrent ingest: nothing acknowledged is lost, nothing is half-written, the chain verifies, retries converge", async () => {
  const trials = Number(process.env.RELIABILITY_CRASH_TRIALS || 20);
  const report = await runCrashTrials({ url: `file:${path.join(dir, "crash.db")}`, trials });
  console.log(JSON.stringify({ ...report, restartMs: undefined, problems: report.problems.slice(0, 20) }));
  expect(report.problems).toEqual([]);
  expect(report.trials).toBe(trials);
  expect(report.serverErrors).toBe(0);
  // The kills must land while work is in flight, or the test proves nothing.
  expect(report.acknowledged).toBeGreaterThan(trials);
  expect(report.unacknowledgedRetried).toBeGreaterThan(0);
  expect(report.recordsStored).toBeGreaterThan(0);
});
