import { z } from "zod";
import { isPlainObject } from "./json";
import { retryDecision, type EffectiveOutcome, type Idempotency, type Outcome, type RetryDecision } from "./outcomes";

/**
 * Corrections: how people change the record without editing it (DOMAIN.md "Corrections").
 * A correction is a new immutable record; the effective outcome is the classification with
 * every correction replayed in order.
 */
export const CORRECTION_ACTIONS = ["resolve", "retract", "reopen"] as const;
export type CorrectionAction = (typeof CORRECTION_ACTIONS)[number];
export const RESOLUTIONS = ["verified", "not_applied", "compensated"] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

/** A stored correction, as replay needs it. */
export type CorrectionFact = { id: string; action: CorrectionAction; outcome: Resolution | null };

const text = z.string().trim();
/** The longest reason a correction may give. */
export const MAX_REASON_LENGTH = 4000;
export const correctionRequestSchema = z
  .object({
    action: z.enum(CORRECTION_ACTIONS),
    outcome: z.enum(RESOLUTIONS).optional(),
    reason: text.min(1, "say why, in words").max(MAX_REASON_LENGTH),
    evidence: z
      .object({ object_id: text.max(1000).optional(), url: text.max(2000).optional(), fingerprint: text.max(1000).optional() })
      .strict()
      .nullish(),
    expected_last_correction_id: z.string().max(100).nullish(),
  })
  .strict();
export type CorrectionRequest = z.infer<typeof correctionRequestSchema>;

export type EffectiveState = {
  outcome: EffectiveOutcome;
  /** A retraction withdrew the agent's success claim. */
  claim_withdrawn: boolean;
  /** The outcome before the resolve now in effect, when a resolve is in effect. */
  resolved_from: EffectiveOutcome | null;
};

/** Replays corrections over the classification. Replay never re-judges: each was valid when made. */
export function replayCorrections(classified: Outcome, corrections: CorrectionFact[]): EffectiveState {
  let state: EffectiveState = { outcome: classified, claim_withdrawn: false, resolved_from: null };
  for (const c of corrections) state = apply(state, c);
  return state;
}

function apply(state: EffectiveState, c: CorrectionFact): EffectiveState {
  switch (c.action) {
    case "resolve":
      return { ...state, outcome: c.outcome!, resolved_from: state.outcome };
    case "retract":
      return { outcome: "divergent", claim_withdrawn: true, resolved_from: null };
    case "reopen":
      return { ...state, outcome: state.resolved_from ?? state.outcome, resolved_from: null };
  }
}

/** The agent claimed success, the outcome is not verified, and nobody has withdrawn the claim. */
export function isOverclaimed(claimed: string | null, state: EffectiveState): boolean {
  return claimed === "success" && !state.claim_withdrawn && (state.outcome === "uncertain" || state.outcome === "divergent" || state.outcome === "rejected");
}

export function needsReview(claimed: string | null, state: EffectiveState): boolean {
  return state.outcome === "uncertain" || state.outcome === "divergent" || isOverclaimed(claimed, state);
}

/** Evidence a reviewer's `verified` needs: a non-empty object_id, url or fingerprint. */
export function hasReviewEvidence(evidence: unknown): boolean {
  if (!isPlainObject(evidence)) return false;
  return ["object_id", "url", "fingerprint"].some((k) => typeof evidence[k] === "string" && (evidence[k] as string).trim().length > 0);
}

export type CorrectionDecision =
  | { ok: true; outcome_seen: EffectiveOutcome; outcome_after: EffectiveOutcome; state_after: EffectiveState; retry_after: RetryDecision }
  | { ok: false; message: string };

/** Whether a reviewer may make this correction now, and what it would do (also the UI's preview). */
export function decideCorrection(
  input: { action: CorrectionAction; outcome?: Resolution; evidence?: unknown },
  current: EffectiveState,
  claimed: string | null,
  idempotency: Idempotency,
  /** The operation was drawn as an audit sample: a reviewer may confirm its verified outcome (shared/METRICS.md). */
  opts: { auditSample?: boolean } = {},
): CorrectionDecision {
  const seen = current.outcome;
  let fact: CorrectionFact;
  switch (input.action) {
    case "resolve":
      if (opts.auditSample && seen === "verified" && current.resolved_from === null) {
        if (input.outcome !== "verified") return { ok: false, message: "an audit sample that verification called verified is confirmed as verified, or retracted" };
      } else if (seen !== "uncertain" && seen !== "divergent") {
        return { ok: false, message: `only an uncertain or divergent operation can be resolved; this one is ${seen.replace("_", " ")}` };
      }
      if (!input.outcome) return { ok: false, message: "say what it resolves to: verified, not_applied or compensated" };
      if (input.outcome === "verified" && !hasReviewEvidence(input.evidence)) {
        return { ok: false, message: "resolving as verified needs evidence: an object_id, url or fingerprint of what you saw" };
      }
      fact = { id: "", action: "resolve", outcome: input.outcome };
      break;
    case "retract":
      // DOMAIN.md: a verified operation, or one "whose agent claimed success while the outcome is
      // not verified": uncertain, divergent, rejected, and also not_applied or compensated (a
      // reviewer's resolution settles the effect, not the agent's claim). Once only: a withdrawn
      // claim cannot be withdrawn again.
      if (seen !== "verified" && !(claimed === "success" && !current.claim_withdrawn)) {
        return { ok: false, message: "only a verified operation, or a success the agent claimed without verification, can be retracted" };
      }
      if (input.outcome) return { ok: false, message: "a retraction sets no outcome: it makes the operation divergent" };
      fact = { id: "", action: "retract", outcome: null };
      break;
    case "reopen":
      if (current.resolved_from === null) return { ok: false, message: "only a resolved operation can be reopened" };
      if (input.outcome) return { ok: false, message: "reopening sets no outcome: it returns to the one before the resolve" };
      fact = { id: "", action: "reopen", outcome: null };
      break;
  }
  const after = apply(current, fact);
  return { ok: true, outcome_seen: seen, outcome_after: after.outcome, state_after: after, retry_after: retryDecision(after.outcome, idempotency) };
}
