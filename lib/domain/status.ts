import type { Review } from "./metrics";
import type { EffectiveOutcome, Outcome } from "./outcomes";
import { displayUtc } from "./time";

/** The correction in effect: who made it and when. */
export type StatusAct = { reviewer: string; recorded_at: string; /** A resolve that also withdrew the agent's success claim. */ withdraw_claim?: boolean };

export type StatusInput = {
  /** The classification's verdict and reason (what the records say). */
  outcome: Outcome;
  reason: string;
  effective_outcome: EffectiveOutcome;
  /** The reviewer's act in effect (lib/domain/metrics.ts reviewOf). */
  review: Review;
  act: StatusAct | null;
};

const label = (o: string) => o.replace("_", " ");

/**
 * What an operation's status says wherever its outcome and reason appear. Without a correction
 * in effect, the classification's reason. With one, the act first, then what it overrides
 * ("resolved as not applied by R at T (was: divergent — …)"), so a reviewer's verdict is never
 * shown beside a reason that contradicts it.
 */
export function statusLine(s: StatusInput): { text: string; corrected: boolean } {
  const was = `(was: ${s.outcome} — ${s.reason})`;
  const byAt = s.act ? ` by ${s.act.reviewer} at ${displayUtc(s.act.recorded_at)}` : "";
  switch (s.review) {
    case "verified":
    case "not_applied":
    case "compensated":
      return { text: `resolved as ${label(s.effective_outcome)}${byAt}${s.act?.withdraw_claim ? ", the agent's success claim withdrawn" : ""} ${was}`, corrected: true };
    case "retracted":
      return { text: `success claim retracted${byAt}: now ${label(s.effective_outcome)} ${was}`, corrected: true };
    default:
      return { text: s.reason, corrected: false };
  }
}

/**
 * The correction a status names, from an operation's corrections in order: for a resolve in
 * effect, the last correction (it is that resolve); for a retracted claim, the last retraction
 * (a resolve and a reopen may have come after it); none otherwise.
 */
export function actInEffect<C extends { action: string }>(review: Review, corrections: readonly C[]): C | null {
  if (review === "none") return null;
  if (review === "retracted") return corrections.findLast((c) => c.action === "retract") ?? null;
  return corrections.at(-1) ?? null;
}
