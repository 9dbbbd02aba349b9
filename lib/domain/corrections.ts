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

/** A stored correction, as replay needs it. `withdraw_claim`: a resolve that also recorded the agent's success claim as false. */
export type CorrectionFact = { id: string; action: CorrectionAction; outcome: Resolution | null; withdraw_claim?: boolean };

const text = z.string().trim();
/** The longest reason a correction may give. */
export const MAX_REASON_LENGTH = 4000;
export const correctionRequestSchema = z
  .object({
    action: z.enum(CORRECTION_ACTIONS),
    outcome: z.enum(RESOLUTIONS).optional(),
    /** With a resolve: the agent's success claim was false (it stays counted as overclaimed). */
    withdraw_claim: z.boolean().optional(),
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
  /** A retraction, or the resolve in effect, withdrew the agent's success claim. */
  claim_withdrawn: boolean;
  /** The outcome before the resolve now in effect, when a resolve is in effect. */
  resolved_from: EffectiveOutcome | null;
  /** The resolve in effect is what withdrew the claim (a reopen undoes the withdrawal with the resolve). */
  withdrawn_by_resolve: boolean;
};

/** Replays corrections over the classification. Replay never re-judges: each was valid when made. */
export function replayCorrections(classified: Outcome, corrections: CorrectionFact[]): EffectiveState {
  let state: EffectiveState = { outcome: classified, claim_withdrawn: false, resolved_from: null, withdrawn_by_resolve: false };
  for (const c of corrections) state = apply(state, c);
  return state;
}

function apply(state: EffectiveState, c: CorrectionFact): EffectiveState {
  switch (c.action) {
    case "resolve": {
      const withdraws = c.withdraw_claim === true && !state.claim_withdrawn;
      return { outcome: c.outcome!, claim_withdrawn: state.claim_withdrawn || withdraws, resolved_from: state.outcome, withdrawn_by_resolve: withdraws };
    }
    case "retract":
      return { outcome: "divergent", claim_withdrawn: true, resolved_from: null, withdrawn_by_resolve: false };
    case "reopen":
      // Back to before the resolve, all of it: a claim that resolve withdrew stands again.
      return { outcome: state.resolved_from ?? state.outcome, claim_withdrawn: state.claim_withdrawn && !state.withdrawn_by_resolve, resolved_from: null, withdrawn_by_resolve: false };
  }
}

/** The agent's success claim stands unwithdrawn: what a reviewer still has to look at on a rejected operation. */
function claimStands(claimed: string | null, state: EffectiveState): boolean {
  return claimed === "success" && !state.claim_withdrawn;
}

/**
 * The agent claimed success and the claim is false or unconfirmed: a reviewer withdrew it (by a
 * retraction or with a resolve), or the outcome is uncertain, divergent, rejected or resolved as
 * not applied. It stays counted after the review: the user was told "success" either way.
 */
export function isOverclaimed(claimed: string | null, state: EffectiveState): boolean {
  if (claimed !== "success") return false;
  return state.claim_withdrawn || state.outcome === "uncertain" || state.outcome === "divergent" || state.outcome === "rejected" || state.outcome === "not_applied";
}

/** Uncertain or divergent, or rejected while the agent's success claim stands. */
export function needsReview(claimed: string | null, state: EffectiveState): boolean {
  return state.outcome === "uncertain" || state.outcome === "divergent" || (state.outcome === "rejected" && claimStands(claimed, state));
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
  input: { action: CorrectionAction; outcome?: Resolution; evidence?: unknown; withdraw_claim?: boolean },
  current: EffectiveState,
  claimed: string | null,
  idempotency: Idempotency,
  /** The operation was drawn as an audit sample: a reviewer may confirm its verified outcome (docs/API.md "Metrics": audit samples). */
  opts: { auditSample?: boolean } = {},
): CorrectionDecision {
  const seen = current.outcome;
  let fact: CorrectionFact;
  switch (input.action) {
    case "resolve":
      if (opts.auditSample && seen === "verified" && current.resolved_from === null) {
        if (input.outcome !== "verified") return { ok: false, message: "an audit sample that verification called verified is confirmed as verified, or retracted" };
      } else if (seen !== "uncertain" && seen !== "divergent" && !(seen === "rejected" && claimStands(claimed, current))) {
        return { ok: false, message: `only an uncertain or divergent operation, or a rejected one whose agent claimed success, can be resolved; this one is ${seen.replace("_", " ")}` };
      }
      if (!input.outcome) return { ok: false, message: "say what it resolves to: verified, not_applied or compensated" };
      if (input.outcome === "verified" && !hasReviewEvidence(input.evidence)) {
        return { ok: false, message: "resolving as verified needs evidence: an object_id, url or fingerprint of what you saw" };
      }
      if (input.withdraw_claim) {
        if (claimed !== "success") return { ok: false, message: "the agent claimed no success here, so there is no claim to withdraw" };
        if (current.claim_withdrawn) return { ok: false, message: "the agent's success claim is already withdrawn" };
        if (input.outcome === "verified") return { ok: false, message: "resolved as verified, the effect held: the claim was true, so it is not withdrawn" };
      }
      fact = { id: "", action: "resolve", outcome: input.outcome, withdraw_claim: input.withdraw_claim === true };
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
      if (input.withdraw_claim) return { ok: false, message: "withdraw_claim goes only with a resolve: a retraction withdraws the claim by itself" };
      fact = { id: "", action: "retract", outcome: null };
      break;
    case "reopen":
      if (current.resolved_from === null) return { ok: false, message: "only a resolved operation can be reopened" };
      if (input.outcome) return { ok: false, message: "reopening sets no outcome: it returns to the one before the resolve" };
      if (input.withdraw_claim) return { ok: false, message: "withdraw_claim goes only with a resolve: a reopen undoes the resolve, with any withdrawal it made" };
      fact = { id: "", action: "reopen", outcome: null };
      break;
  }
  const after = apply(current, fact);
  return { ok: true, outcome_seen: seen, outcome_after: after.outcome, state_after: after, retry_after: retryDecision(after.outcome, idempotency) };
}
