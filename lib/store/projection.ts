import "server-only";
import { deriveOperation, type OperationState, type StoredStage } from "@/lib/domain/operation";
import type { Tx } from "./db";

type Identity = { operationId: string; createdSeq: number; createdAt: string };

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
    outcome: state.classification.outcome,
    reason: state.classification.reason,
    failureCategory: state.classification.failure_category,
    effectiveOutcome: state.effective_outcome,
    needsReview: state.needs_review,
    overclaimed: state.overclaimed,
    stageCount: stages.length,
    correctionCount: 0,
    lastCorrectionId: null,
  };
}

/**
 * Replaces the derived rows (view, search keys, dependency edges) of these operations with
 * what their records say now. The projection is disposable: the same function rebuilds it.
 */
export async function writeProjection(
  tx: Tx,
  ops: { identity: Identity; stages: StoredStage[] }[],
): Promise<Map<string, OperationState>> {
  const states = new Map<string, OperationState>();
  if (!ops.length) return states;
  const ids = ops.map((o) => o.identity.operationId);
  const views = [];
  const keys: { key: string; operationId: string }[] = [];
  const edges: { operationId: string; dependsOn: string }[] = [];
  for (const { identity, stages } of ops) {
    const state = deriveOperation(identity.operationId, stages);
    states.set(identity.operationId, state);
    views.push(viewRow(identity, stages, state));
    for (const key of state.search_keys) keys.push({ key, operationId: identity.operationId });
    for (const dep of state.depends_on) edges.push({ operationId: identity.operationId, dependsOn: dep });
  }
  await tx.operationView.deleteMany({ where: { operationId: { in: ids } } });
  await tx.operationKey.deleteMany({ where: { operationId: { in: ids } } });
  await tx.operationEdge.deleteMany({ where: { operationId: { in: ids } } });
  await tx.operationView.createMany({ data: views });
  if (keys.length) await tx.operationKey.createMany({ data: keys });
  if (edges.length) await tx.operationEdge.createMany({ data: edges });
  return states;
}
