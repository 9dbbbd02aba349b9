import { approvalRequestOf, classifyWithApproval, deriveApproval, isHeld, type ApprovalFact, type ApprovalState } from "./approval";
import { classify, comparedFacts, toolName, type Classification, type StageFact } from "./classify";
import { isOverclaimed, needsReview, replayCorrections, type CorrectionFact, type EffectiveState } from "./corrections";
import { isPlainObject } from "./json";
import { callKindOf, type CallKind } from "./call-kind";
import { retryDecision, type EffectiveOutcome, type Idempotency, type RetryDecision } from "./outcomes";
import { mergeEnvelopes } from "./stages";
import { isVerifierSender } from "./verifier";
import { readExpectsFingerprint, readWindowClosesAt } from "./verifier-check";
import type { Stage } from "./wire";

/** A stage record as stored (chain payload of kind "stage"). */
export type StoredStage = {
  seq: number;
  stage: Stage;
  observed_at: string | null;
  recorded_at: string;
  /** The stage exactly as received. */
  data: unknown;
  envelope: Record<string, unknown> | null;
  /** Who sent it (the chained payload's `sent_by`), when known: a verifier's reads carry their window. */
  sent_by?: { via: string; name?: string } | null;
};

/** The classification's view of a stage record: a verifier's read carries the end of its window. */
export function stageFact(s: StoredStage): StageFact {
  if (s.stage === "canonical_read" && s.sent_by?.via === "system" && isVerifierSender(s.sent_by.name)) {
    return { stage: s.stage, seq: s.seq, payload: s.data, window_closes_at: readWindowClosesAt(s.data), ...(readExpectsFingerprint(s.data) ? { expects_fingerprint: true } : {}) } as StageFact;
  }
  return { stage: s.stage, seq: s.seq, payload: s.data } as StageFact;
}

export type OperationState = {
  envelope: Record<string, unknown>;
  classification: Classification;
  effective_outcome: EffectiveOutcome;
  effective: EffectiveState;
  correction_count: number;
  last_correction_id: string | null;
  retry: RetryDecision;
  /** The agent claimed success while the outcome is not verified. */
  overclaimed: boolean;
  /** Uncertain or divergent and not resolved, or overclaimed. */
  needs_review: boolean;
  tool: string | null;
  agent: string | null;
  target: string | null;
  trajectory_id: string | null;
  claimed_outcome: string | null;
  receipt_status: string | null;
  receipt_id: string | null;
  depends_on: string[];
  /** Operations this one names in `recovers` (Metric 5). */
  recovers: string[];
  /** The intent's content fingerprint: with trajectory and tool, what makes a later operation a retry of this one. */
  fingerprint: string | null;
  /** Operation id, receipt id and evidence object ids: what free-text search finds. */
  search_keys: string[];
  /** What the call does to the world (call-kind.ts): reads and idempotent calls are not queued for uncertainty. */
  kind: CallKind;
  /** The call was held for approval (docs/GATEWAY.md): where that stands. */
  approval: ApprovalState | null;
};

const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);
const idList = (v: unknown): string[] => (Array.isArray(v) ? [...new Set(v.filter((d): d is string => typeof d === "string"))] : []);

/**
 * What the verdict compared, for showing in place with the two values side by side: a receipt
 * naming another tool, and a deciding read whose fingerprint differs from the intent's.
 */
export function comparedOf(stages: StoredStage[]): {
  wrong_tool: { operation: string; receipt: string } | null;
  fingerprint_differs: { intent: string; read: string } | null;
  fingerprint_missing: { intent: string | null } | null;
  presence_only: boolean;
} {
  const ordered = [...stages].sort((a, b) => a.seq - b.seq);
  const envelope = mergeEnvelopes(ordered.map((s) => s.envelope));
  const facts = { tool: envelope.tool, idempotency: envelope.idempotency as Idempotency, stages: ordered.map(stageFact) };
  const c = comparedFacts(facts);
  return {
    wrong_tool: c.wrongTool,
    fingerprint_differs: c.fingerprintDiffers,
    // Issue 54: the deciding match named the object without the fingerprint expected.
    fingerprint_missing: c.fingerprintMissing,
    // Verified, with no fingerprint to compare: the object's presence is all the evidence.
    presence_only: c.presenceOnly && classify(facts).outcome === "verified",
  };
}

/**
 * Everything derived about one operation from its immutable records. Stage payloads were
 * validated at ingest, so they are read here with the wire types.
 */
export function deriveOperation(operationId: string, stages: StoredStage[], corrections: CorrectionFact[] = [], approvals: ApprovalFact[] = []): OperationState {
  const ordered = [...stages].sort((a, b) => a.seq - b.seq);
  const envelope = mergeEnvelopes(ordered.map((s) => s.envelope));
  const facts = ordered.map(stageFact);
  const intentStage = ordered.find((s) => s.stage === "intent");
  const intent = intentStage?.data as Record<string, unknown> | undefined;
  const receipt = ordered.find((s) => s.stage === "receipt")?.data as Record<string, unknown> | undefined;
  const request = intentStage ? approvalRequestOf(envelope) : null;
  const approval = request ? deriveApproval(request, intentStage!.recorded_at, intent?.params, approvals) : null;
  const classification = classifyWithApproval(
    classify({ tool: envelope.tool, idempotency: envelope.idempotency as Idempotency, kind: callKindOf(envelope), stages: facts }),
    approval,
    receipt !== undefined,
    envelope.idempotency as Idempotency,
  );
  const effectiveState = replayCorrections(classification.outcome, corrections);
  const effective: EffectiveOutcome = effectiveState.outcome;
  // A call held for approval waits in the Approvals tab, not among the calls to reconcile.
  const held = isHeld(approval, receipt !== undefined);
  const claimed = str(envelope.claimed_outcome);
  const overclaimed = isOverclaimed(claimed, effectiveState);
  const kind = callKindOf(envelope);
  // A read changes nothing to reconcile; an idempotent call's uncertainty is settled by repeating it.
  const reviewable = kind === "write" || (kind === "idempotent" && effective !== "uncertain");
  const keys = new Set<string>([operationId]);
  if (str(receipt?.receipt_id)) keys.add(receipt!.receipt_id as string);
  for (const s of ordered) {
    if (s.stage !== "canonical_read" || !isPlainObject(s.data)) continue;
    const ev = s.data.evidence;
    if (isPlainObject(ev) && str(ev.object_id)) keys.add(ev.object_id as string);
  }
  const agent = envelope.agent;
  return {
    envelope,
    classification,
    effective_outcome: effective,
    effective: effectiveState,
    correction_count: corrections.length,
    last_correction_id: corrections.length ? corrections[corrections.length - 1].id : null,
    retry: retryDecision(effective, envelope.idempotency as Idempotency, kind),
    overclaimed,
    needs_review: !held && reviewable && needsReview(claimed, effectiveState),
    tool: toolName(envelope.tool),
    agent: typeof agent === "string" ? str(agent) : isPlainObject(agent) ? str(agent.name) : null,
    target: str(intent?.target),
    trajectory_id: str(envelope.trajectory_id),
    claimed_outcome: claimed,
    receipt_status: str(receipt?.status),
    receipt_id: str(receipt?.receipt_id),
    depends_on: idList(envelope.depends_on),
    recovers: idList(envelope.recovers),
    fingerprint: str(intent?.fingerprint),
    search_keys: [...keys],
    kind,
    approval,
  };
}
