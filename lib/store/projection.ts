import "server-only";
import type { CorrectionFact } from "@/lib/domain/corrections";
import { deriveOperation, type OperationState, type StoredStage } from "@/lib/domain/operation";
import { asSql, deleteIn, insertMany, type SqlLike } from "./sql";

export type Identity = { operationId: string; createdSeq: number; createdAt: string };

export function viewRow(identity: Identity, stages: StoredStage[], state: OperationState) {
  const last = stages.reduce((m, s) => (s.seq > m.seq ? s : m), stages[0]);
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
    receiptAt: stages.find((s) => s.stage === "receipt")?.observed_at ?? null,
    outcome: state.classification.outcome,
    reason: state.classification.reason,
    failureCategory: state.classification.failure_category,
    effectiveOutcome: state.effective_outcome,
    needsReview: state.needs_review,
    overclaimed: state.overclaimed,
    stageCount: stages.length,
    correctionCount: state.correction_count,
    lastCorrectionId: state.last_correction_id,
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
};

/**
 * Replaces the derived rows (view, search keys, dependency edges) of these operations with
 * what their records say now. The projection is disposable: the same function rebuilds it.
 */
export async function writeProjection(
  db: SqlLike,
  ops: { identity: Identity; stages: StoredStage[]; corrections?: CorrectionFact[] }[],
  /** Operations that may already have derived rows (default: all of them). */
  opts: { existing?: string[] } = {},
): Promise<Map<string, OperationState>> {
  const states = new Map<string, OperationState>();
  if (!ops.length) return states;
  const ids = ops.map((o) => o.identity.operationId);
  const views = [];
  const keys: { key: string; operationId: string }[] = [];
  const edges: { operationId: string; dependsOn: string }[] = [];
  for (const { identity, stages, corrections } of ops) {
    const state = deriveOperation(identity.operationId, stages, corrections);
    states.set(identity.operationId, state);
    views.push(viewRow(identity, stages, state));
    for (const key of state.search_keys) keys.push({ key, operationId: identity.operationId });
    for (const dep of state.depends_on) edges.push({ operationId: identity.operationId, dependsOn: dep });
  }
  const tx = asSql(db);
  const stale = opts.existing ?? ids;
  if (stale.length) {
    await deleteIn(tx, "operation_views", "operation_id", stale);
    await deleteIn(tx, "operation_keys", "operation_id", stale);
    await deleteIn(tx, "operation_edges", "operation_id", stale);
  }
  const columns = Object.keys(VIEW_COLUMNS) as (keyof ReturnType<typeof viewRow>)[];
  await insertMany(tx, "operation_views", columns.map((c) => VIEW_COLUMNS[c]), views.map((v) => columns.map((c) => v[c])));
  await insertMany(tx, "operation_keys", ["key", "operation_id"], keys.map((k) => [k.key, k.operationId]));
  await insertMany(tx, "operation_edges", ["operation_id", "depends_on"], edges.map((e) => [e.operationId, e.dependsOn]));
  return states;
}
