import "server-only";
import { isPossibleOperationId } from "@/lib/domain/wire";
import { randomUUID } from "node:crypto";
import { isHeld } from "@/lib/domain/approval";
import { decideCorrection, type CorrectionRequest } from "@/lib/domain/corrections";
import { deriveOperation } from "@/lib/domain/operation";
import type { Idempotency } from "@/lib/domain/outcomes";
import { releaseRecord, requireNotClaimedByOther } from "./assignments";
import { appendToChain, lockChain } from "../chain/chain";
import { maybeCheckpoint } from "../chain/checkpoints";
import { writeTransaction } from "../db/db";
import { StoreError } from "../errors";
import { writeProjection } from "../projection/projection";
import { correctionFacts, loadOperationRecords, type CorrectionPayload } from "../chain/stage-records";
import { announceCorrection } from "../work/webhook-outbox";
import { exportCorrectionVerdict } from "../work/verdict-outbox";

/**
 * A reviewer's correction: a new immutable record in the chain, never an edit. Taken under
 * the chain lock, so of two reviewers acting on the same state exactly one wins; the other
 * named a latest correction that is no longer the latest and gets a conflict with the current state.
 * An operation someone else has claimed is claimed_by_other for everyone, admins included,
 * until they take it over (a recorded act). A correction releases the corrector's claim.
 */
export async function correctOperation(input: { operationId: string; request: CorrectionRequest; reviewer: string }) {
  const { operationId, request, reviewer } = input;
  if (!isPossibleOperationId(operationId)) throw new StoreError("not_found", `no operation with the id ${JSON.stringify(operationId)}`);
  const result = await writeTransaction(async (tx) => {
    await lockChain(tx, [operationId]);
    const identity = await tx.operation.findUnique({ where: { operationId } });
    if (!identity) throw new StoreError("not_found", `no operation with the id ${operationId}`);
    // Under the chain lock, so no claim can land between this check and the correction.
    const holder = await requireNotClaimedByOther(tx, operationId, reviewer);
    const records = (await loadOperationRecords(tx, [operationId])).get(operationId) ?? { stages: [], corrections: [] };
    const facts = correctionFacts(records.corrections);
    const state = deriveOperation(operationId, records.stages, facts, records.approvals);
    const last = records.corrections.at(-1) ?? null;
    const expected = request.expected_last_correction_id ?? null;
    if (expected !== (last?.id ?? null)) {
      throw new StoreError("conflict", "someone corrected this operation since you loaded it: look at the current state and act on it", {
        effective_outcome: state.effective_outcome,
        last_correction_id: last?.id ?? null,
        last_correction: last ? { action: last.action, outcome: last.outcome, reviewer: last.reviewer, reason: last.reason, recorded_at: last.recorded_at } : null,
      });
    }
    const auditSample = (await tx.auditSample.count({ where: { operationId } })) > 0;
    // A held call has not gone out: it is approved or denied (Review → approvals), not corrected.
    if (isHeld(state.approval, state.receipt_status !== null)) {
      throw new StoreError("conflict", "this call is held for approval and was not sent: approve or deny it (Review → approvals) instead of correcting it", { effective_outcome: state.effective_outcome });
    }
    const decision = decideCorrection(request, state.effective, state.claimed_outcome, state.envelope.idempotency as Idempotency, { auditSample });
    if (!decision.ok) throw new StoreError("invalid_input", decision.message, { effective_outcome: state.effective_outcome });
    const payload: CorrectionPayload = {
      id: randomUUID(),
      action: request.action,
      outcome_seen: decision.outcome_seen,
      outcome: request.action === "resolve" ? request.outcome! : null,
      ...(request.action === "resolve" && request.withdraw_claim ? { withdraw_claim: true as const } : {}),
      reason: request.reason,
      evidence: request.evidence ? Object.fromEntries(Object.entries(request.evidence).filter(([, v]) => v)) as Record<string, string> : null,
      follows: last?.id ?? null,
    };
    // The correction ends the reviewer's claim: the release is recorded right after it.
    const [record] = await appendToChain(
      tx,
      [{ kind: "correction", operation_id: operationId, actor: reviewer, payload }, ...(holder ? [releaseRecord(operationId, reviewer, holder)] : [])],
      undefined,
      { locked: true },
    );
    const states = await writeProjection(tx, [{ identity, stages: records.stages, approvals: records.approvals, corrections: [...facts, ...correctionFacts([{ ...payload, seq: record.seq, recorded_at: record.recorded_at, reviewer, hash: record.hash }])] }]);
    const after = states.get(operationId)!;
    const correction = { ...payload, reviewer, seq: record.seq, recorded_at: record.recorded_at };
    await announceCorrection(tx, operationId, state.effective_outcome, after, correction);
    await exportCorrectionVerdict(tx, operationId, state.effective_outcome, after, correction);
    return {
      correction: { ...correction, hash: record.hash },
      effective_outcome: after.effective_outcome,
      retry: after.retry,
    };
  });
  void maybeCheckpoint();
  return result;
}
