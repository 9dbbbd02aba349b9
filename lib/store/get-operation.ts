import "server-only";
import { deriveOperation } from "@/lib/domain/operation";
import { reader } from "./db";
import { derivedState } from "./ingest-records";
import { loadStages } from "./stage-records";

/** One operation with every stage record and its derived state (shared/API.md "Read"). */
export async function getOperation(operationId: string) {
  const db = await reader();
  const identity = await db.operation.findUnique({ where: { operationId } });
  if (!identity) return null;
  const stages = (await loadStages(db, [operationId])).get(operationId) ?? [];
  const state = deriveOperation(operationId, stages);
  const stale = new Set(state.classification.stale_read_seqs);
  const env = state.envelope;
  return {
    ...derivedState(operationId, state),
    trajectory_id: state.trajectory_id,
    depends_on: state.depends_on,
    agent: env.agent ?? null,
    tool: env.tool ?? null,
    claimed_outcome: state.claimed_outcome,
    idempotency: env.idempotency ?? null,
    created_at: identity.createdAt,
    stages: stages.map((s) => ({
      seq: s.seq,
      stage: s.stage,
      observed_at: s.observed_at,
      recorded_at: s.recorded_at,
      payload: s.data,
      ...(s.envelope ? { envelope: s.envelope } : {}),
      hash: s.hash,
      ...(s.stage === "canonical_read" ? { stale: stale.has(s.seq), deciding: s.seq === state.classification.deciding_read_seq } : {}),
    })),
    corrections: [] as unknown[],
    effective_outcome: state.effective_outcome,
    retry: state.retry,
    needs_review: state.needs_review,
    overclaimed: state.overclaimed,
  };
}

export type OperationDetail = NonNullable<Awaited<ReturnType<typeof getOperation>>>;
