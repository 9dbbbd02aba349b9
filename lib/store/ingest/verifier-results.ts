import "server-only";
import type { Sender } from "@/lib/domain/trust";
import { finishJob, giveBackJob, heldJobs, type Job } from "../work/jobs";
import type { Sql } from "../db/sql";
import { ingestRecords, type ValidRecord } from "./records";

/**
 * Verifier checks' results, recorded in groups (lib/verifiers/commit.ts): each result is its job's
 * end (done, failed, or given back to run again later) and, for a performed check, the read it
 * records as an ordinary canonical-read stage record of the operation. A whole group is written in
 * the caller's one write transaction — the reads appended to the chain with everything ingest
 * writes with them (projection, outbox rows, webhooks), and every job's end — so it commits all
 * together or not at all.
 *
 * Only the results of jobs their claim still holds are written (heldJobs locks those rows for the
 * transaction): a check whose lease ran out and was taken over by another worker or instance
 * records nothing here, whatever that worker records counts. A crash before the commit leaves
 * every job of the group pending under its lease, to be claimed and performed again when it ends.
 */

export type CheckResult = {
  job: Job;
  /** What the job's row says: done, failed for good, or pending again at `retryAt`. */
  end: { status: "done" | "failed"; error?: string } | { retryAt: number; error: string };
  /** The read to record (a performed check), as ingest takes it. */
  read?: { operationId: string; raw: Record<string, unknown>; sender: Sender };
};

/** What became of each result, in order: recorded, or left out because its job was taken over. */
export type CheckRecorded = "recorded" | "taken over";

export async function recordCheckResults(tx: Sql, results: CheckResult[]): Promise<CheckRecorded[]> {
  const held = new Set((await heldJobs(tx, results.map((r) => r.job))).map((j) => j.id));
  const kept = results.map((r, i) => ({ r, i })).filter(({ r }) => held.has(r.job.id));
  const reads: ValidRecord[] = kept.flatMap(({ r, i }) => (r.read ? [{ index: i, ...r.read }] : []));
  const ingested = new Map((await ingestRecords(reads, { tx })).map((res) => [res.index, res]));
  for (const { r, i } of kept) {
    const res = ingested.get(i);
    if (res && "error" in res) await finishJob(tx, r.job, { status: "failed", error: `the read could not be recorded: ${res.error.message}` });
    else if ("retryAt" in r.end) await giveBackJob(tx, r.job, r.end.retryAt, r.end.error);
    else await finishJob(tx, r.job, r.end);
  }
  return results.map((r) => (held.has(r.job.id) ? "recorded" : "taken over"));
}
