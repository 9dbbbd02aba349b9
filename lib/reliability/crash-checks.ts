import { expect } from "vitest";
import type { CrashReport } from "./crash";

/** What every crash run must show (crash.rtest.ts on SQLite, crash.pgtest.ts on PostgreSQL). */
export function expectPromisesHeld(report: CrashReport, trials: number) {
  console.log(JSON.stringify({ ...report, restartMs: undefined, problems: report.problems.slice(0, 20) }));
  expect(report.problems).toEqual([]);
  expect(report.trials).toBe(trials);
  expect(report.serverErrors).toBe(0);
  // The kills must land while work is in flight, or the test proves nothing.
  expect(report.acknowledged).toBeGreaterThan(trials);
  expect(report.unacknowledgedRetried).toBeGreaterThan(0);
  expect(report.recordsStored).toBeGreaterThan(0);
}
