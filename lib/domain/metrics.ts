import type { EffectiveState } from "./corrections";
import { REASONS, type Outcome } from "./outcomes";

/**
 * The paper's Metrics 1–5 (000 §VII) over Reconcile's own records, as docs/DOMAIN.md "The
 * paper's metrics" defines them. Pure: each operation is reduced to a few facts
 * (`metricFacts`), operations with equal facts are counted together (the rollup's rows), and the
 * metrics are sums over those counts (`computeMetrics`). The store keeps the counts; this file decides what they mean.
 */

/** What the agent said about its own call: no claim, a success claim, or anything else. */
export type Claim = "none" | "success" | "other";
/** Did the intended effect hold? Unknown is kept apart, never guessed. */
export type Actual = "held" | "not_held" | "unknown";
/** The reviewer's act now in effect: a resolution, a retracted success, or none. */
export type Review = "none" | "verified" | "not_applied" | "compensated" | "retracted";

export type MetricFacts = {
  claim: Claim;
  actual: Actual;
  /** The receipt said success (status `accepted`). */
  accepted: boolean;
  /** Verification's verdict: the classification before any correction. */
  verdict: Outcome;
  review: Review;
  /** A detected failure that was recovered (see `recovered` in the store: a compensation, or a later verified operation). */
  recovered: boolean;
  /** The operation was drawn as an audit sample. */
  sampled: boolean;
};

export const CLAIMS: readonly Claim[] = ["none", "success", "other"];
export const ACTUALS: readonly Actual[] = ["held", "not_held", "unknown"];
export const REVIEWS: readonly Review[] = ["none", "verified", "not_applied", "compensated", "retracted"];

export function claimOf(claimed: string | null): Claim {
  return claimed === null ? "none" : claimed === "success" ? "success" : "other";
}

/** The reviewer's act in effect: a resolve not reopened, else a withdrawn success claim, else none. */
export function reviewOf(effective: Pick<EffectiveState, "outcome" | "claim_withdrawn" | "resolved_from">): Review {
  if (effective.resolved_from !== null) {
    const o = effective.outcome;
    if (o === "verified" || o === "not_applied" || o === "compensated") return o;
  }
  if (effective.claim_withdrawn && effective.outcome === "divergent") return "retracted";
  return "none";
}

/**
 * The actual postcondition (METRICS.md "What counts as the truth"): a reviewer's resolution
 * first (verified, compensated → held; not_applied → not held; a retraction → not held), then
 * the decisive effective classification (verified → held; divergent, rejected → not held),
 * uncertain → unknown. One refinement: a *false failure* (the write was rejected but the
 * canonical effect is present, DOMAIN.md rule 2) is divergent, yet its effect is evidently
 * there, so it counts as held.
 */
export function actualOf(input: { effective: EffectiveState; reason: string; review: Review }): Actual {
  switch (input.review) {
    case "verified":
    case "compensated":
      return "held";
    case "not_applied":
    case "retracted":
      return "not_held";
    case "none":
      break;
  }
  switch (input.effective.outcome) {
    case "verified":
    case "compensated":
      return "held";
    case "divergent":
      return input.reason === REASONS.rejectedButPresent ? "held" : "not_held";
    case "not_applied":
    case "rejected":
      return "not_held";
    case "uncertain":
      return "unknown";
  }
}

export const METRIC_NAMES = ["grounding_accuracy", "silent_failure_rate", "verification_precision", "verification_recall", "recovery_rate"] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** Which part of a metric an operation belongs to: the event counted (`hit`), the rest of `n` (`miss`), or left out as unknown. */
export type MetricPart = "hit" | "miss" | "unknown";

export const METRIC_TITLES: Record<MetricName, { number: number; title: string; hit: string; miss: string; unknown: string }> = {
  grounding_accuracy: { number: 1, title: "Grounding accuracy", hit: "belief matched the effect", miss: "belief differed from the effect", unknown: "claim made, effect unknown" },
  silent_failure_rate: { number: 2, title: "Silent failure rate", hit: "accepted, effect did not hold", miss: "accepted, effect held", unknown: "accepted, effect unknown" },
  verification_precision: { number: 3, title: "Verification precision", hit: "flagged, confirmed not applied", miss: "flagged, reviewer found otherwise", unknown: "flagged, not resolved yet" },
  verification_recall: { number: 4, title: "Verification recall", hit: "failure flagged by verification", miss: "failure verification missed", unknown: "effect unknown" },
  recovery_rate: { number: 5, title: "Recovery rate", hit: "detected failure recovered", miss: "detected failure not recovered", unknown: "—" },
};

/**
 * Where one operation falls in each metric: `hit` and `miss` make up n (hit is the numerator),
 * `unknown` is counted apart, null means the operation is not part of that metric at all.
 */
export function metricPart(metric: MetricName, f: MetricFacts): MetricPart | null {
  switch (metric) {
    case "grounding_accuracy":
      if (f.claim === "none") return null;
      if (f.actual === "unknown") return "unknown";
      return (f.claim === "success") === (f.actual === "held") ? "hit" : "miss";
    case "silent_failure_rate":
      if (!f.accepted) return null;
      if (f.actual === "unknown") return "unknown";
      return f.actual === "not_held" ? "hit" : "miss";
    case "verification_precision":
      if (f.verdict !== "divergent") return null;
      if (f.review === "verified" || f.review === "compensated") return "miss";
      if (f.review === "not_applied") return "hit";
      return "unknown";
    case "verification_recall":
      // Failures known from reviewers: resolved not applied, or a success retracted (an audit
      // sample found wrong). Flagged: verification's verdict was divergent.
      if (f.review === "not_applied" || f.review === "retracted") return f.verdict === "divergent" ? "hit" : "miss";
      if (f.actual === "unknown") return "unknown";
      return null;
    case "recovery_rate":
      if (f.verdict !== "divergent" && f.verdict !== "rejected") return null;
      return f.recovered ? "hit" : "miss";
  }
}

/** The list filter's parts of a metric: hit, the rest of n, n, unknown, and n's audit samples (lib/store/queries/metric-filters.ts). */
export const METRIC_PARTS = ["hit", "miss", "n", "unknown", "samples"] as const;
export type MetricListPart = (typeof METRIC_PARTS)[number];

/** Operations with equal facts, counted together (one rollup row's worth). */
export type FactCount = { facts: MetricFacts; count: number };

export type Interval = { low: number; high: number };

export type Metric = {
  name: MetricName;
  /** hit / n, or null when n is 0. */
  value: number | null;
  hit: number;
  n: number;
  /** 95 % Wilson score interval of value; null when n is 0. */
  interval: Interval | null;
  /** Operations that would belong to this metric but whose truth is unknown: not in n. */
  unknown: number;
  /** How many of n rest on audit samples (operations drawn for review at the sampling rate). */
  from_samples: number;
};

/** z for a two-sided 95 % interval. */
const Z95 = 1.959963984540054;

/** The Wilson score interval (Wilson 1927) for hit successes in n trials; null when n is 0. */
export function wilson(hit: number, n: number, z = Z95): Interval | null {
  if (n <= 0) return null;
  const p = hit / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z / denom) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // Clamp rounding noise at the ends (hit = 0 or hit = n give exactly 0 and 1 in exact arithmetic).
  return { low: Math.max(0, hit === 0 ? 0 : centre - half), high: Math.min(1, hit === n ? 1 : centre + half) };
}

export function metricFrom(name: MetricName, hit: number, n: number, unknown: number, fromSamples: number): Metric {
  return { name, value: n ? hit / n : null, hit, n, interval: wilson(hit, n), unknown, from_samples: fromSamples };
}

export type Metrics = Record<MetricName, Metric>;

/** Metrics 1–5 over counted facts. */
export function computeMetrics(counts: Iterable<FactCount>): Metrics {
  const acc = Object.fromEntries(METRIC_NAMES.map((m) => [m, { hit: 0, miss: 0, unknown: 0, sampled: 0 }])) as Record<
    MetricName,
    { hit: number; miss: number; unknown: number; sampled: number }
  >;
  for (const { facts, count } of counts) {
    if (!count) continue;
    for (const m of METRIC_NAMES) {
      const part = metricPart(m, facts);
      if (part === null) continue;
      acc[m][part] += count;
      if (part !== "unknown" && facts.sampled && facts.review !== "none") acc[m].sampled += count;
    }
  }
  return Object.fromEntries(
    METRIC_NAMES.map((m) => [m, metricFrom(m, acc[m].hit, acc[m].hit + acc[m].miss, acc[m].unknown, acc[m].sampled)]),
  ) as Metrics;
}

/**
 * Whether the operation of a detected failure is recovered by another one (METRICS.md Metric 5):
 * the other was recorded later, ended verified, and either names it in `recovers` or shares
 * its trajectory, tool and intent fingerprint (all three present).
 */
export type RecoveryCandidate = {
  operation_id: string;
  created_seq: number;
  trajectory_id: string | null;
  tool: string | null;
  fingerprint: string | null;
  effective_outcome: string;
  recovers: readonly string[];
};

export function recoveredBy(failure: RecoveryCandidate, later: RecoveryCandidate): boolean {
  if (later.created_seq <= failure.created_seq || later.effective_outcome !== "verified") return false;
  if (later.recovers.includes(failure.operation_id)) return true;
  return (
    failure.trajectory_id !== null &&
    failure.tool !== null &&
    failure.fingerprint !== null &&
    later.trajectory_id === failure.trajectory_id &&
    later.tool === failure.tool &&
    later.fingerprint === failure.fingerprint
  );
}

/** Recovered: compensated by a reviewer, or recovered by any of `others`. Only detected failures (divergent, rejected) can be. */
export function isRecovered(failure: RecoveryCandidate & { verdict: Outcome; review: Review }, others: Iterable<RecoveryCandidate>): boolean {
  if (failure.verdict !== "divergent" && failure.verdict !== "rejected") return false;
  if (failure.review === "compensated") return true;
  for (const o of others) if (recoveredBy(failure, o)) return true;
  return false;
}

/**
 * Deterministic audit sampling: an operation is drawn when a hash of its id falls below the
 * rate, so the same operation is drawn (or not) on every instance and every rebuild.
 */
export function sampleDraw(operationId: string): number {
  // FNV-1a, 32 bits: cheap, stable, and uniform enough for a sampling rate.
  let h = 0x811c9dc5;
  for (let i = 0; i < operationId.length; i++) {
    h ^= operationId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h / 0x100000000;
}

export function isDrawn(operationId: string, rate: number): boolean {
  return rate > 0 && sampleDraw(operationId) < rate;
}

/** The facts of one operation, from its derived state plus what needs other operations (recovery) or the sampler. */
export function metricFacts(
  state: {
    claimed_outcome: string | null;
    receipt_status: string | null;
    /** A read's receipt is no write's success: it is not counted in Metric 2. */
    kind?: string;
    classification: { outcome: Outcome; reason: string };
    effective: EffectiveState;
  },
  extra: { recovered: boolean; sampled: boolean },
): MetricFacts {
  const review = reviewOf(state.effective);
  return {
    claim: claimOf(state.claimed_outcome),
    actual: actualOf({ effective: state.effective, reason: state.classification.reason, review }),
    accepted: state.receipt_status === "accepted" && state.kind !== "read",
    verdict: state.classification.outcome,
    review,
    recovered: extra.recovered,
    sampled: extra.sampled,
  };
}
