import "server-only";
import { writeTransaction } from "../db/db";
import { enqueueJobs, finishJob, type Job } from "../work/jobs";

/** The daily retention job (lib/retention/jobs.ts): one a UTC day, keyed by its day, so every instance enqueues the same one. */
export const ARCHIVE_SEAL_JOB = "archive.seal";

const DAY = 86_400_000;
/** A few minutes past midnight UTC: the day that just ended is whole. */
const PAST_MIDNIGHT = 10 * 60_000;

const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);

/** The job for the UTC day of `now`, due now (enqueued at start: nothing waits a day after an upgrade or a restart). */
export async function enqueueTodaysSeal(now = Date.now()): Promise<void> {
  await writeTransaction((tx) => enqueueJobs(tx, [{ kind: ARCHIVE_SEAL_JOB, key: `archive-seal:${dayOf(now)}`, payload: { day: dayOf(now) }, dueAt: now }]));
}

/** Finishes a seal job and enqueues the next day's, in one transaction: the chain of daily jobs never breaks. */
export async function finishSealJob(job: Job, result: { status: "done" | "failed"; error?: string }, now = Date.now()): Promise<void> {
  const next = Math.floor(now / DAY) * DAY + DAY + PAST_MIDNIGHT;
  await writeTransaction(async (tx) => {
    await enqueueJobs(tx, [{ kind: ARCHIVE_SEAL_JOB, key: `archive-seal:${dayOf(next)}`, payload: { day: dayOf(next) }, dueAt: next }]);
    await finishJob(tx, job, result);
  });
}
