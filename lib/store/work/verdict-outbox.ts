import "server-only";
import { currentProjectSlug } from "../db/project-context";
import { randomUUID } from "node:crypto";
import type { ChainRecord } from "@/lib/domain/hash";
import type { OperationState } from "@/lib/domain/operation";
import type { EffectiveOutcome } from "@/lib/domain/outcomes";
import { verdictEvent, type VerdictChange, type VerdictEvent } from "@/lib/domain/verdicts/event";
import { configuredVerdictTargets, notExportableReason, type VerdictTargetKind } from "@/lib/domain/verdicts/targets";
import { reader } from "../db/db";
import { asSql, insertMany, placeholder, selectIn, type SqlLike } from "../db/sql";
import { enqueueJobs } from "./jobs";

/**
 * The verdict export's outbox (docs/API.md "Verdicts out"). While a verdict target is set
 * (RECONCILE_VERDICT_OTLP_ENDPOINT, _PHOENIX_URL, _LANGFUSE_URL), each change of an operation's
 * effective outcome (its first verdict included) is a row of `verdict_exports` per target, written
 * INSIDE the write transaction of the change, with the job that sends it: an event exists exactly
 * when its cause committed. A transaction's events for one target go out together, in one request
 * per job (at most VERDICTS_PER_JOB of them). A row for Phoenix or Langfuse of an operation without
 * the agent's span is written `not_exportable`, with the reason, and no job.
 */
export const VERDICT_JOB_KIND = "verdict.export";
export const VERDICTS_PER_JOB = 500;

/** `target` absent: a job written before issue 52, for the OTLP export. */
export type VerdictJob = { ids: string[]; target?: VerdictTargetKind };
export const VERDICT_EXPORT_STATUSES = ["pending", "delivered", "failed", "not_exportable", "superseded"] as const;
export type VerdictExportStatus = (typeof VERDICT_EXPORT_STATUSES)[number];

/** Whether verdicts are exported at all (checked per write: without the setting nothing is written). */
export const verdictExportOn = (): boolean => configuredVerdictTargets(process.env).length > 0;

async function queue(db: SqlLike, changes: VerdictChange[]): Promise<void> {
  if (!changes.length) return;
  const now = new Date().toISOString();
  const publicUrl = process.env.RECONCILE_PUBLIC_URL || undefined;
  const project = currentProjectSlug() ?? undefined;
  const targets = configuredVerdictTargets(process.env);
  const events = changes.map((c) => ({ c, event: verdictEvent({ ...c, publicUrl, project }) }));
  const rows: unknown[][] = [];
  const jobs = [];
  const due = Date.now();
  for (const target of targets) {
    const sendable: string[] = [];
    for (const { c, event } of events) {
      const id = `vx_${randomUUID()}`;
      const why = notExportableReason(target, event);
      rows.push([id, target, c.operationId, c.after.effective_outcome, JSON.stringify(event), why ? "not_exportable" : "pending", 0, why, now]);
      if (!why) sendable.push(id);
    }
    for (let i = 0; i < sendable.length; i += VERDICTS_PER_JOB) {
      const ids = sendable.slice(i, i + VERDICTS_PER_JOB);
      const payload: VerdictJob = { ids, target };
      jobs.push({ kind: VERDICT_JOB_KIND, key: `verdict:${ids[0]}`, payload, dueAt: due });
    }
  }
  await insertMany(db, "verdict_exports", ["id", "target", "operation_id", "outcome", "event", "status", "attempts", "last_error", "created_at"], rows);
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

export type PendingVerdict = { id: string; attempts: number; operationId: string; createdAt: string; event: VerdictEvent };

/** The job's events still to send (pending), in the order they were written. */
export async function pendingVerdicts(ids: string[]): Promise<PendingVerdict[]> {
  const rows = await selectIn<{ id: string; attempts: number | bigint; operation_id: string; created_at: string; event: string }>(
    await reader(),
    "SELECT id, attempts, operation_id, created_at, event FROM verdict_exports WHERE id IN %IN% AND status = 'pending' ORDER BY created_at, id",
    ids,
  );
  return rows.map((r) => ({ id: r.id, attempts: Number(r.attempts), operationId: r.operation_id, createdAt: r.created_at, event: JSON.parse(r.event) as VerdictEvent }));
}

/**
 * Of these pending events for `target`, the ones a later verdict of the same operation for the
 * same target replaces (written after it, not `not_exportable`): Phoenix and Langfuse keep one
 * annotation or score per operation, so sending an older verdict after a newer one would put
 * the older back. The caller records them `superseded` instead of sending them.
 */
export async function supersededVerdicts(target: VerdictTargetKind, events: PendingVerdict[]): Promise<Set<string>> {
  if (!events.length) return new Set();
  const latest = new Map<string, string>();
  const rows = await selectIn<{ operation_id: string; created_at: string }>(
    await reader(),
    `SELECT operation_id, MAX(created_at) AS created_at FROM verdict_exports WHERE operation_id IN %IN% AND target = %P1% AND status <> 'not_exportable' GROUP BY operation_id`,
    [...new Set(events.map((e) => e.operationId))],
    [target],
  );
  for (const r of rows) latest.set(r.operation_id, r.created_at);
  return new Set(events.filter((e) => (latest.get(e.operationId) ?? "") > e.createdAt).map((e) => e.id));
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
