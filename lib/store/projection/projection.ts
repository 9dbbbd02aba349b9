import "server-only";
import type { ApprovalFact } from "@/lib/domain/approval";
import type { CorrectionFact } from "@/lib/domain/corrections";
import { deriveOperation, type OperationState, type StoredStage } from "@/lib/domain/operation";
import { actualOf, reviewOf } from "@/lib/domain/metrics";
import type { EffectiveOutcome } from "@/lib/domain/outcomes";
import { linkedState, waitingTrace, type TraceLink } from "@/lib/domain/trace-link";
import { lockDerived } from "../chain/chain";
import { finishMetricRows, prepareMetricRows, type MetricRow } from "./metrics-projection";
import { searchRows, searchRowsOf, writeSearchRows, type SearchRow } from "./search-index";
import { addToCounters, asSql, deleteIn, insertMany, selectIn, type Sql, type SqlLike } from "../db/sql";

export type Identity = { operationId: string; createdSeq: number; createdAt: string };

export function viewRow(identity: Identity, stages: StoredStage[], state: OperationState) {
  const last = stages.reduce((m, s) => (s.seq > m.seq ? s : m), stages[0]);
  const receiptAt = stages.find((s) => s.stage === "receipt")?.observed_at ?? null;
  return {
    operationId: identity.operationId,
    createdSeq: identity.createdSeq,
    createdAt: identity.createdAt,
    lastSeq: last.seq,
    updatedAt: last.recorded_at,
    tool: state.tool,
    agent: state.agent,
    target: state.target,
    trajectoryId: state.trajectory_id,
    claimedOutcome: state.claimed_outcome,
    receiptStatus: state.receipt_status,
    receiptId: state.receipt_id,
    receiptAt,
    outcome: state.classification.outcome,
    reason: state.classification.reason,
    failureCategory: state.classification.failure_category,
    effectiveOutcome: state.effective_outcome,
    needsReview: state.needs_review,
    overclaimed: state.overclaimed,
    stageCount: stages.length,
    correctionCount: state.correction_count,
    lastCorrectionId: state.last_correction_id,
    // The paper's metrics (metrics-projection.ts sets recovered and auditSample once written).
    fingerprint: state.fingerprint,
    actual: actualOf({ effective: state.effective, reason: state.classification.reason, review: reviewOf(state.effective) }),
    review: reviewOf(state.effective),
    recovered: false,
    auditSample: false,
    // When the call happened (the review queue's order): the receipt's clock, else when recorded
    // (an intent carries no time of its own).
    calledAt: receiptAt ?? identity.createdAt,
    kind: state.kind,
  };
}

/** Column names of operation_views for each field of viewRow(). */
const VIEW_COLUMNS: Record<keyof ReturnType<typeof viewRow>, string> = {
  operationId: "operation_id",
  createdSeq: "created_seq",
  createdAt: "created_at",
  lastSeq: "last_seq",
  updatedAt: "updated_at",
  tool: "tool",
  agent: "agent",
  target: "target",
  trajectoryId: "trajectory_id",
  claimedOutcome: "claimed_outcome",
  receiptStatus: "receipt_status",
  receiptId: "receipt_id",
  receiptAt: "receipt_at",
  outcome: "outcome",
  reason: "reason",
  failureCategory: "failure_category",
  effectiveOutcome: "effective_outcome",
  needsReview: "needs_review",
  overclaimed: "overclaimed",
  stageCount: "stage_count",
  correctionCount: "correction_count",
  lastCorrectionId: "last_correction_id",
  fingerprint: "fingerprint",
  actual: "actual",
  review: "review",
  recovered: "recovered",
  auditSample: "audit_sample",
  calledAt: "called_at",
  kind: "kind",
};

export type ProjectionOp = { identity: Identity; stages: StoredStage[]; corrections?: (CorrectionFact & { reason?: string })[]; approvals?: ApprovalFact[] };

/**
 * What the projection of these operations writes, computed without the database: their derived
 * states, view rows, search keys, dependency edges and search documents. Pure, so that ingest
 * can compute it for a group decided ahead of the chain lock (ingest-speculation.ts) instead of
 * while holding it. Its view rows are completed as they are written (writeProjection): a plan is
 * written once.
 */
export type ProjectionPlan = {
  states: Map<string, OperationState>;
  views: ReturnType<typeof viewRow>[];
  keys: { key: string; createdSeq: number }[];
  edges: { operationId: string; dependsOn: string }[];
  search: SearchRow[];
  /** operation_approvals rows, in APPROVAL_COLUMNS order. */
  approvals: unknown[][];
};

const APPROVAL_COLUMNS = ["operation_id", "created_seq", "status", "tool", "rule", "requested_at", "expires_at", "decided_by", "decided_at", "used_at"];

/** `links`: by operation id, the trace links some of these operations take (linksOf), applied to their states (lib/domain/trace-link.ts). */
export function planProjection(ops: ProjectionOp[], links?: Map<string, TraceLink>): ProjectionPlan {
  const states = new Map<string, OperationState>();
  const views: ReturnType<typeof viewRow>[] = [];
  const keys: { key: string; createdSeq: number }[] = [];
  const edges: { operationId: string; dependsOn: string }[] = [];
  const approvals: unknown[][] = [];
  for (const { identity, stages, corrections, approvals: approvalFacts } of ops) {
    const derived = deriveOperation(identity.operationId, stages, corrections, approvalFacts);
    const link = links?.get(identity.operationId);
    const state = link && waitingTrace(derived) ? linkedState(derived, link) : derived;
    states.set(identity.operationId, state);
    const a = state.approval;
    if (a) approvals.push([identity.operationId, identity.createdSeq, a.status, state.tool, a.rule, a.requested_at, a.expires_at, a.decided_by, a.decided_at, a.used_at]);
    views.push(viewRow(identity, stages, state));
    // An operation's own id is found by the operations table's key: not repeated here.
    for (const key of state.search_keys) if (key !== identity.operationId) keys.push({ key, createdSeq: identity.createdSeq });
    for (const dep of state.depends_on) edges.push({ operationId: identity.operationId, dependsOn: dep });
  }
  return { states, views, keys, edges, search: ops.length ? searchRows(searchRowsOf(ops, states)) : [], approvals };
}

/**
 * Replaces the derived rows (view, search keys, dependency edges) of these operations with
 * what their records say now. The projection is disposable: the same function rebuilds it.
 * `plan`: planProjection(ops), when it was computed ahead.
 */
export async function writeProjection(
  db: SqlLike,
  ops: ProjectionOp[],
  /** Operations that may already have derived rows (default: all of them); the others must be ones this transaction creates. `rates`: the audit sampling rates, when read ahead. `drawAudits`: draw audit samples (ingest). `before` receives their effective outcome before this write (webhooks). */
  opts: { existing?: string[]; drawAudits?: boolean; before?: Map<string, EffectiveOutcome>; rates?: Map<string, number> } = {},
  plan: ProjectionPlan = planProjection(ops),
): Promise<Map<string, OperationState>> {
  if (!ops.length) return plan.states;
  const ids = ops.map((o) => o.identity.operationId);
  const tx = asSql(db);
  // Rollups and recovery span operations, so other chains' transactions write them too.
  await lockDerived(tx);
  // OTLP operations whose request did not name their conversation take their trace's link, read
  // under the lock that writing a link takes (../ingest/trace-links.ts), so neither misses the other.
  const links = await linksOf(tx, plan.states);
  if (links.size) plan = planProjection(ops, links);
  const { states, views, keys, edges } = plan;
  const stale = opts.existing ?? ids;
  const staleIds = new Set(stale);
  await prepareMetricRows(tx, views, { draw: opts.drawAudits ?? false, now: new Date().toISOString(), fresh: ids.filter((id) => !staleIds.has(id)), rates: opts.rates });
  const staleSeqs = ops.filter((o) => staleIds.has(o.identity.operationId)).map((o) => o.identity.createdSeq);
  let replaced: RollupFacts[] = [];
  let replacedRows: (RollupRow & MetricRow)[] = [];
  if (stale.length) {
    replacedRows = await selectIn<RollupRow & MetricRow>(tx, `DELETE FROM operation_views WHERE operation_id IN %IN% RETURNING *`, stale);
    replaced = replacedRows.map(rollupFacts);
    for (const r of replacedRows) opts.before?.set(r.operation_id, r.effective_outcome as EffectiveOutcome);
    await deleteIn(tx, "operation_keys", "created_seq", staleSeqs);
    await deleteIn(tx, "operation_edges", "operation_id", stale);
    // Only an operation whose intent asked for approval has a row (the request never goes away),
    // so ordinary ingest adds no statement here.
    const held = stale.filter((id) => states.get(id)?.approval);
    if (held.length) await deleteIn(tx, "operation_approvals", "operation_id", held);
  }
  const columns = Object.keys(VIEW_COLUMNS) as (keyof ReturnType<typeof viewRow>)[];
  await insertMany(tx, "operation_views", columns.map((c) => VIEW_COLUMNS[c]), views.map((v) => columns.map((c) => v[c])));
  await insertMany(tx, "operation_keys", ["key", "created_seq"], keys.map((k) => [k.key, k.createdSeq]));
  await insertMany(tx, "operation_edges", ["operation_id", "depends_on"], edges.map((e) => [e.operationId, e.dependsOn]));
  await insertMany(tx, "operation_approvals", APPROVAL_COLUMNS, plan.approvals);
  await writeSearchRows(tx, plan.search, staleSeqs);
  await finishMetricRows(tx, { views, states, removed: replacedRows, replacedIds: stale });
  await updateRollups(tx, replaced, views);
  return states;
}

/** otel_trace_links is keyed by trace and the sending user ("" for none). */
export const linkKey = (traceId: string, ownerId: string | null) => `${traceId} ${ownerId ?? ""}`;

/** The stored links of these traces (otel_trace_links), by linkKey. */
export async function readTraceLinks(db: SqlLike, traceIds: string[]): Promise<Map<string, TraceLink>> {
  const rows = await selectIn<{ trace_id: string; owner_id: string; conversation_id: string | null; agent: string | null }>(
    db,
    "SELECT trace_id, owner_id, conversation_id, agent FROM otel_trace_links WHERE trace_id IN %IN%",
    traceIds,
  );
  return new Map(rows.map((r) => [linkKey(r.trace_id, r.owner_id), { conversation: r.conversation_id, agent: r.agent }]));
}

/**
 * The links these operations take, by operation id: those of them waiting on a trace
 * (waitingTrace) whose owner has a link for it. No statement unless one is waiting.
 */
export async function linksOf(db: SqlLike, states: Map<string, OperationState>): Promise<Map<string, TraceLink>> {
  const out = new Map<string, TraceLink>();
  const waiting = new Map<string, string>();
  for (const [id, state] of states) {
    const trace = waitingTrace(state);
    if (trace) waiting.set(id, trace);
  }
  if (!waiting.size) return out;
  const links = await readTraceLinks(db, [...new Set(waiting.values())]);
  if (!links.size) return out;
  const owners = await selectIn<{ operation_id: string; owner_id: string | null }>(db, "SELECT operation_id, owner_id FROM operations WHERE operation_id IN %IN%", [...waiting.keys()]);
  for (const o of owners) {
    const link = links.get(linkKey(waiting.get(o.operation_id)!, o.owner_id));
    const state = states.get(o.operation_id)!;
    // Only a link that changes something (a request that named its agent but no conversation mostly matches its trace's).
    if (link && (link.conversation !== null || (link.agent !== null && link.agent !== state.agent))) out.set(o.operation_id, link);
  }
  return out;
}

/** What outcome_rollups counts of one operation_views row. */
type RollupFacts = {
  calledAt: string;
  tool: string | null;
  effectiveOutcome: string;
  needsReview: boolean;
  overclaimed: boolean;
};
type RollupRow = {
  called_at: string;
  tool: string | null;
  effective_outcome: string;
  needs_review: boolean | number;
  overclaimed: boolean | number;
};

const rollupFacts = (r: RollupRow): RollupFacts => ({
  calledAt: r.called_at,
  tool: r.tool,
  effectiveOutcome: r.effective_outcome,
  // SQLite hands booleans back as 0/1.
  needsReview: Boolean(r.needs_review),
  overclaimed: Boolean(r.overclaimed),
});

/**
 * Keeps outcome_rollups in step with operation_views, by the day of the call (called_at, the
 * clock of every figure counted by day): the rows this write replaced are counted out, the new
 * ones counted in, netted per key, in the same transaction. A receipt arriving after its intent
 * moves the operation's call day (from when it was recorded to the receipt's time), which is
 * one count out of the old day and one into the new.
 */
async function updateRollups(tx: Sql, removed: RollupFacts[], added: RollupFacts[]): Promise<void> {
  const outcomes = new Map<string, unknown[]>();
  const count = (f: RollupFacts, sign: 1 | -1) => {
    const key = [f.calledAt.slice(0, 10), f.tool ?? "", f.effectiveOutcome, f.needsReview, f.overclaimed];
    const k = JSON.stringify(key);
    const row = outcomes.get(k) ?? [...key, 0];
    (row[5] as number) += sign;
    outcomes.set(k, row);
  };
  for (const f of removed) count(f, -1);
  for (const f of added) count(f, 1);
  const outcomeRows = [...outcomes.values()].filter((r) => r[5] !== 0);
  if (outcomeRows.length) await addToCounters(tx, "outcome_rollups", ["day", "tool", "effective_outcome", "needs_review", "overclaimed"], ["operations"], outcomeRows);
}
