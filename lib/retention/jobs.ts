import "server-only";
import { openTarget } from "@/lib/archive/targets";
import { registerJobHandler } from "@/lib/jobs/worker";
import type { Job } from "@/lib/store/work/jobs";
import { sealExpired, type SealReport } from "@/lib/store/archive/seal";
import { ARCHIVE_SEAL_JOB, enqueueTodaysSeal, finishSealJob } from "@/lib/store/archive/schedule";
import { retentionSettings } from "./config";
import { effectiveRetention } from "@/lib/domain/retention";
import { projectById } from "@/lib/store/people/projects";
import { currentProjectId } from "@/lib/store/db/project-context";

/**
 * The current project's retention: its own `retention_days` when set, else the instance's
 * RECONCILE_RETENTION_DAYS; null when it keeps everything. Sealing needs RECONCILE_ARCHIVE_URL.
 */
async function projectRetention(): Promise<{ days: number; archiveUrl: string } | null> {
  const settings = retentionSettings();
  const days = effectiveRetention((await projectById(currentProjectId()))?.retentionDays ?? null, settings.days)?.days ?? null;
  if (days === null) return null;
  if (!settings.archiveUrl) throw new Error(`this project keeps ${days} days, but RECONCILE_ARCHIVE_URL is not set: retention seals records into the archive before it deletes them`);
  return { days, archiveUrl: settings.archiveUrl };
}

/**
 * Why retention or the archive is off for the current project, in words (null: both are on):
 * audit:verify refuses a sealed_through row where nothing could have sealed it.
 */
export async function retentionOffReason(): Promise<string | null> {
  const archiveUrl = process.env.RECONCILE_ARCHIVE_URL?.trim() || null;
  let instanceDays: number | null;
  try {
    instanceDays = retentionSettings().days;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  const days = effectiveRetention((await projectById(currentProjectId()))?.retentionDays ?? null, instanceDays)?.days ?? null;
  if (days === null) return "retention is off for this project (neither its retention_days nor RECONCILE_RETENTION_DAYS is set)";
  if (!archiveUrl) return "RECONCILE_ARCHIVE_URL is not set";
  return null;
}

/** Seals what retention lets go in the current project, now (the daily job and `npm run cli -- archive:seal`). Null: retention is off. */
export async function sealNow(actor = "retention"): Promise<SealReport | null> {
  const retention = await projectRetention();
  if (!retention) return null;
  return sealExpired(openTarget(retention.archiveUrl), retention.days, { actor });
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

/** With retention on for the current project, enqueues today's seal there (when its worker starts). */
export async function scheduleRetention(): Promise<void> {
  if (await projectRetention()) await enqueueTodaysSeal();
}
