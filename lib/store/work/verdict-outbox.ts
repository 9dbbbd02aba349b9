import "server-only";
import { currentProjectSlug } from "../db/project-context";
import { randomUUID } from "node:crypto";
import type { ChainRecord } from "@/lib/domain/hash";
import type { OperationState } from "@/lib/domain/operation";
import type { EffectiveOutcome } from "@/lib/domain/outcomes";
import { verdictEvent, type VerdictChange, type VerdictEvent } from "@/lib/domain/verdicts/event";
import { reader } from "../db/db";
import { asSql, insertMany, placeholder, selectIn, type SqlLike } from "../db/sql";
import { enqueueJobs } from "./jobs";

/**
 * The verdict export's outbox (docs/API.md "Verdicts out"). While RECONCILE_VERDICT_OTLP_ENDPOINT
 * is set, each change of an operation's effective outcome (its first verdict included) is a row
 * of `verdict_exports`, written INSIDE the write transaction of the change, with the job that
 * sends it: an event exists exactly when its cause committed. A transaction's events go out
 * together, in one OTLP request per job (at most VERDICTS_PER_JOB of them).
 */
export const VERDICT_JOB_KIND = "verdict.export";
export const VERDICTS_PER_JOB = 500;

export type VerdictJob = { ids: string[] };
export const VERDICT_EXPORT_STATUSES = ["pending", "delivered", "failed"] as const;
export type VerdictExportStatus = (typeof VERDICT_EXPORT_STATUSES)[number];

/** Whether verdicts are exported at all (checked per write: without the setting nothing is written). */
export const verdictExportOn = (): boolean => Boolean(process.env.RECONCILE_VERDICT_OTLP_ENDPOINT?.trim());

async function queue(db: SqlLike, changes: VerdictChange[]): Promise<void> {
  if (!changes.length) return;
  const now = new Date().toISOString();
  const publicUrl = process.env.RECONCILE_PUBLIC_URL || undefined;
  const project = currentProjectSlug() ?? undefined;
  const rows = changes.map((c) => {
    const event = verdictEvent({ ...c, publicUrl, project });
    return [`vx_${randomUUID()}`, c.operationId, c.after.effective_outcome, JSON.stringify(event), "pending", 0, now];
  });
  await insertMany(db, "verdict_exports", ["id", "operation_id", "outcome", "event", "status", "attempts", "created_at"], rows);
  const due = Date.now();
  const jobs = [];
  for (let i = 0; i < rows.length; i += VERDICTS_PER_JOB) {
    const ids = rows.slice(i, i + VERDICTS_PER_JOB).map((r) => r[0] as string);
    const payload: VerdictJob = { ids };
    jobs.push({ kind: VERDICT_JOB_KIND, key: `verdict:${ids[0]}`, payload, dueAt: due });
  }
  await enqueueJobs(db, jobs);
}

/** Ingest's changes: each operation whose effective outcome this transaction set or changed. */
export async function exportStageVerdicts(
  db: SqlLike,
  appended: Pick<ChainRecord, "operation_id" | "recorded_at">[],
  states: Map<string, OperationState>,
  before: Map<string, EffectiveOutcome>,
): Promise<void> {
  if (!verdictExportOn()) return;
  const at = new Map<string, string>();
  for (const r of appended) if (r.operation_id) at.set(r.operation_id, r.recorded_at);
  const changes: VerdictChange[] = [];
  for (const [id, recordedAt] of at) {
    const after = states.get(id);
    if (after && before.get(id) !== after.effective_outcome) changes.push({ operationId: id, after, at: recordedAt });
  }
  await queue(db, changes);
}

/** A correction's change, with the reviewer's reason. */
export async function exportCorrectionVerdict(
  db: SqlLike,
  operationId: string,
  before: EffectiveOutcome,
  after: OperationState,
  correction: { action: string; reason: string; recorded_at: string },
): Promise<void> {
  if (!verdictExportOn() || before === after.effective_outcome) return;
  await queue(db, [{ operationId, after, at: correction.recorded_at, reviewer: { action: correction.action, reason: correction.reason } }]);
}

export type PendingVerdict = { id: string; attempts: number; event: VerdictEvent };

/** The job's events still to send (pending), in the order they were written. */
export async function pendingVerdicts(ids: string[]): Promise<PendingVerdict[]> {
  const rows = await selectIn<{ id: string; attempts: number | bigint; event: string }>(
    await reader(),
    "SELECT id, attempts, event FROM verdict_exports WHERE id IN %IN% AND status = 'pending' ORDER BY created_at, id",
    ids,
  );
  return rows.map((r) => ({ id: r.id, attempts: Number(r.attempts), event: JSON.parse(r.event) as VerdictEvent }));
}

/**
 * One attempt's end for these events, in the caller's transaction (the one that ends or gives
 * back the job): delivered, failed for good, or still pending, with the error the attempt met.
 */
export async function recordVerdictAttempt(db: SqlLike, ids: string[], end: { status: VerdictExportStatus; error: string | null }): Promise<void> {
  if (!ids.length) return;
  const p = placeholder;
  const now = new Date().toISOString();
  // A job names at most VERDICTS_PER_JOB events: one statement.
  const list = ids.map((_, i) => p(4 + i)).join(", ");
  await asSql(db).run(
    `UPDATE verdict_exports SET attempts = attempts + 1, status = ${p(1)}, last_error = ${p(2)}, delivered_at = ${p(3)} WHERE status = 'pending' AND id IN (${list})`,
    [end.status, end.error?.slice(0, 2000) ?? null, end.status === "delivered" ? now : null, ...ids],
  );
}
