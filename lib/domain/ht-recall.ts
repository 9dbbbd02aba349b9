/**
 * Metric 4 (verification recall) estimated from a review queue that saw only a sample of the
 * operations verification passed (issue 37). Reviewers see every flagged operation, but a failure
 * verification missed (verified, effect absent) is found only when an audit sample draws it, so
 * the plain recall over reviewed operations counts each such miss once where there are about
 * 1/π of them. Horvitz–Thompson: each reviewed failure weighs 1 / its inclusion probability π.
 */
export type ReviewedOperation = {
  /** Verification flagged it (divergent). */
  flagged: boolean;
  /** The reviewer found the effect not there. */
  failed: boolean;
  /** The probability it was reviewed at all: 1 when escalated, the audit sampling rate when drawn. */
  probability: number;
};

export type HtRecall = {
  /** Estimated recall: flagged failures over estimated failures; null when no failure is known. */
  value: number | null;
  /** Estimated failures (flagged and missed). */
  failures: number;
  /** Estimated failures verification missed. */
  missed: number;
  /** Standard error of `missed` under Poisson sampling: √Σ (1 − π) / π² over the reviewed misses. */
  missedStdError: number;
};

export function htRecall(ops: Iterable<ReviewedOperation>): HtRecall {
  let flagged = 0;
  let missed = 0;
  let variance = 0;
  for (const o of ops) {
    if (!(o.probability > 0 && o.probability <= 1)) throw new RangeError(`inclusion probability must be in (0, 1], not ${o.probability}`);
    if (!o.failed) continue;
    const w = 1 / o.probability;
    if (o.flagged) flagged += w;
    else {
      missed += w;
      variance += (1 - o.probability) / (o.probability * o.probability);
    }
  }
  const failures = flagged + missed;
  return { value: failures > 0 ? flagged / failures : null, failures, missed, missedStdError: Math.sqrt(variance) };
}
