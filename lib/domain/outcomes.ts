import type { CallKind } from "./call-kind";
/** The vocabulary of outcomes, reasons, failure categories and retry decisions, written once. */

export const OUTCOMES = ["rejected", "uncertain", "divergent", "verified"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** After a reviewer's correction an operation may also be not_applied or compensated. */
export const EFFECTIVE_OUTCOMES = [...OUTCOMES, "not_applied", "compensated"] as const;
export type EffectiveOutcome = (typeof EFFECTIVE_OUTCOMES)[number];

export const REASONS = {
  noReceipt: "no receipt recorded",
  rejectedButPresent: "the write was rejected but the canonical effect is present",
  matchWithoutEvidence: "a canonical match was claimed without evidence",
  rejected: "the write boundary did not accept the operation",
  readUnavailable: "the write was accepted, but canonical read-back is unavailable",
  absent: "the write was accepted but the canonical effect is absent",
  /** A verifier's `absent` read before its window's end (VERIFIERS.md): eventual consistency is normal. */
  windowOpen: "observation window open",
  mismatch: "the write was accepted but canonical state conflicts with the intent",
  fingerprintDiffers: "the canonical object's fingerprint differs from the intent",
  /** A match naming the object without the fingerprint the intent (or the verifier's rule) expects: an empty 200 says nothing. */
  fingerprintMissing: "the read found the object but did not show its content to compare",
  partial: "the write executed only partially",
  verified: "canonical state matches the intended effect",
} as const;

/** Paper Table I. */
export const FAILURE_CATEGORIES = {
  1: "wrong tool selection",
  2: "wrong parameter construction",
  3: "silent partial failure",
  4: "success signal without effect",
  5: "no verification step",
} as const;
export type FailureCategory = keyof typeof FAILURE_CATEGORIES;

export type RetryDecision = {
  automatic: false;
  safe_replay_available: boolean;
  decision: string;
};

export const RETRY_DECISIONS = {
  verified: "do not retry: the effect is verified",
  rejected: "a new operation may be justified by new evidence",
  blocked: "blocked until canonical state is reconciled",
  not_applied: "a new operation may be issued",
  compensated: "do not retry: the effect was compensated",
  idempotent: "the tool is idempotent: a repeat has no further effect, so it may be sent again",
} as const;

export type Idempotency = { enforced?: boolean | null; key?: string | null } | null | undefined;

/**
 * The retry table (DOMAIN.md "Retry decision"). Automatic retry is never allowed; an enforced
 * idempotency key only makes a *reviewed* replay available for uncertain and divergent outcomes.
 */
export function retryDecision(outcome: EffectiveOutcome, idempotency: Idempotency, kind: CallKind = "write"): RetryDecision {
  switch (outcome) {
    case "verified":
      return { automatic: false, safe_replay_available: false, decision: RETRY_DECISIONS.verified };
    case "rejected":
      return { automatic: false, safe_replay_available: false, decision: RETRY_DECISIONS.rejected };
    case "not_applied":
      return { automatic: false, safe_replay_available: false, decision: RETRY_DECISIONS.not_applied };
    case "compensated":
      return { automatic: false, safe_replay_available: false, decision: RETRY_DECISIONS.compensated };
    case "uncertain":
    case "divergent": {
      // A read or an idempotent call has no further effect when repeated: a replay is safe by its nature.
      if (kind !== "write") return { automatic: false, safe_replay_available: true, decision: RETRY_DECISIONS.idempotent };
      const safe =
        idempotency?.enforced === true && typeof idempotency.key === "string" && idempotency.key.length > 0;
      return { automatic: false, safe_replay_available: safe, decision: RETRY_DECISIONS.blocked };
    }
  }
}
