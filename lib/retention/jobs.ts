import "server-only";
import { openTarget } from "@/lib/archive/targets";
import { registerJobHandler } from "@/lib/jobs/worker";
import type { Job } from "@/lib/store/work/jobs";
import { sealExpired, type SealReport } from "@/lib/store/archive/seal";
import { ARCHIVE_SEAL_JOB, enqueueTodaysSeal, finishSealJob } from "@/lib/store/archive/schedule";
import { retentionSettings } from "./config";

/** Seals what retention lets go, now (the daily job and `npm run cli -- archive:seal`). Null: retention is off. */
export async function sealNow(actor = "retention"): Promise<SealReport | null> {
  const settings = retentionSettings();
  if (settings.days === null) return null;
  return sealExpired(openTarget(settings.archiveUrl), settings.days, { actor });
}

/**
 * The daily job: seals, then finishes and enqueues tomorrow's in one transaction. Sealing is
 * idempotent (a segment written but not yet deleted is written again), so a crash anywhere
 * leaves a job whose lease runs out and is claimed again.
 */
export async function runSealJob(job: Job): Promise<void> {
  const report = await sealNow();
  if (report?.sealed.length) console.error(`retention: sealed ${report.records} records into ${report.sealed.length} segment(s), through seq ${report.sealed[report.sealed.length - 1].last_seq}`);
  await finishSealJob(job, { status: "done" });
}

/** Registers the daily seal with the worker (lib/cli/job-handlers.ts). */
export function registerRetentionJobs(): void {
  registerJobHandler(ARCHIVE_SEAL_JOB, runSealJob, { concurrency: 1 });
}

/** With retention on, enqueues today's seal in the current project (when its worker starts). */
export async function scheduleRetention(): Promise<void> {
  if (retentionSettings().days !== null) await enqueueTodaysSeal();
}
