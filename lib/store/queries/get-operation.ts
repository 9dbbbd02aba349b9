import "server-only";
import { reviewOf } from "@/lib/domain/metrics";
import { isPossibleOperationId } from "@/lib/domain/wire";
import { comparedOf } from "@/lib/domain/operation";
import { verdictHistory } from "@/lib/domain/verdict-history";
import type { OperationDetail } from "@/lib/views/operation-detail";
import { reader } from "../db/db";
import { commentsOf } from "../review/comments";
import { attemptsOf } from "../ingest/attempts";
import { derivedState } from "../ingest/records";
import { loadOperationRecords, stateOf } from "../chain/stage-records";
import { linksOf } from "../projection/projection";
import { linkedState } from "@/lib/domain/trace-link";

/** One operation with every stage record and its derived state (docs/API.md "Read"). */
export async function getOperation(operationId: string): Promise<OperationDetail | null> {
  // No stored operation has an id the wire schema refuses (and PostgreSQL refuses a NUL in a query).
  if (!isPossibleOperationId(operationId)) return null;
  const db = await reader();
  const identity = await db.operation.findUnique({ where: { operationId } });
  if (!identity) return null;
  const records = (await loadOperationRecords(db, [operationId])).get(operationId) ?? { stages: [], corrections: [] };
  const stages = records.stages;
  // Its trace's conversation and agent when its own request did not name them (lib/domain/trace-link.ts), as in the lists.
  const unlinked = stateOf(operationId, records);
  const state = linkedState(unlinked, (await linksOf(db, new Map([[operationId, unlinked]]))).get(operationId));
  const stale = new Set(state.classification.stale_read_seqs);
  const sampled = (await db.auditSample.count({ where: { operationId } })) > 0;
  const downstreamIds = (await db.operationEdge.findMany({ where: { dependsOn: operationId }, select: { operationId: true } })).map((e) => e.operationId);
  const linked = await db.operationView.findMany({
    where: { operationId: { in: [...state.depends_on, ...downstreamIds] } },
    select: { operationId: true, effectiveOutcome: true, tool: true, createdSeq: true },
  });
  const linkedById = new Map(linked.map((l) => [l.operationId, l]));
  const link = (id: string) => {
    const v = linkedById.get(id);
    return { operation_id: id, effective_outcome: v?.effectiveOutcome ?? null, tool: v?.tool ?? null };
  };
  const upstream = state.depends_on.map(link);
  const sentBy = new Map(stages.map((s) => [s.seq, s.sent_by]));
  const reviewerBySeq = new Map(records.corrections.map((c) => [c.seq, c.reviewer]));
  const history = verdictHistory(stages, records.corrections.map((c) => ({ id: c.id, action: c.action, outcome: c.outcome, seq: c.seq, recorded_at: c.recorded_at })));
  const env = state.envelope;
  return {
    ...derivedState(operationId, state),
    trajectory_id: state.trajectory_id,
    depends_on: state.depends_on,
    agent: state.agent !== unlinked.agent ? { name: state.agent } : (env.agent ?? null),
    tool: env.tool ?? null,
    claimed_outcome: state.claimed_outcome,
    idempotency: env.idempotency ?? null,
    otel: env.otel ?? null,
    created_at: identity.createdAt,
    stages: stages.map((s) => ({
      seq: s.seq,
      stage: s.stage,
      observed_at: s.observed_at,
      recorded_at: s.recorded_at,
      payload: s.data,
      ...(s.envelope ? { envelope: s.envelope } : {}),
      hash: s.hash,
      sent_by: s.sent_by,
      ...(s.stage === "canonical_read" ? { stale: stale.has(s.seq), deciding: s.seq === state.classification.deciding_read_seq } : {}),
    })),
    corrections: records.corrections.map((c) => ({
      id: c.id,
      action: c.action,
      outcome_seen: c.outcome_seen,
      outcome: c.outcome,
      ...(c.withdraw_claim ? { withdraw_claim: true as const } : {}),
      reason: c.reason,
      evidence: c.evidence,
      reviewer: c.reviewer,
      follows: c.follows,
      seq: c.seq,
      recorded_at: c.recorded_at,
      hash: c.hash,
    })),
    comments: await commentsOf(operationId, db),
    attempts: await attemptsOf(operationId, db),
    verdict_history: history.map((h) => ({
      ...h,
      sent_by: h.kind === "stage" ? sentBy.get(h.seq)! : null,
      reviewer: h.kind === "correction" ? (reviewerBySeq.get(h.seq) ?? null) : null,
    })),
    claim_withdrawn: state.effective.claim_withdrawn,
    resolved_from: state.effective.resolved_from,
    effective_outcome: state.effective_outcome,
    retry: state.retry,
    // A verified audit sample waits in the review queue until a reviewer acts (as its list row says).
    needs_review: state.needs_review || (sampled && state.effective_outcome === "verified" && reviewOf(state.effective) === "none"),
    overclaimed: state.overclaimed,
    audit_sample: sampled,
    approval: state.approval,
    recovers: state.recovers,
    upstream,
    downstream: downstreamIds.map(link),
    built_on_unverified_premise: upstream.some((u) => u.effective_outcome !== "verified"),
    compared: comparedOf(stages),
  };
}

/** An operation's effective outcome and last record as the projection has it now (one indexed read), or null when there is no such operation. */
export async function currentOutcome(operationId: string): Promise<{ outcome: string; lastSeq: number } | null> {
  if (!isPossibleOperationId(operationId)) return null;
  const db = await reader();
  const row = await db.operationView.findUnique({ where: { operationId }, select: { effectiveOutcome: true, lastSeq: true } });
  return row ? { outcome: row.effectiveOutcome, lastSeq: row.lastSeq } : null;
}
