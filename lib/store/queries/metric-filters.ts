import "server-only";
import { METRIC_NAMES, METRIC_PARTS, type MetricListPart, type MetricName } from "@/lib/domain/metrics";
import type { Prisma } from "../generated/sqlite/client";

/**
 * The operations behind each number of /metrics, as operations-list filters: `metric` names the
 * metric, `part` which of its operations (`hit`: the numerator; `miss`: the rest of n; `n`: both;
 * `unknown`: counted apart; `samples`: the part of n resting on reviewed audit samples). The
 * same sets as metricPart() in lib/domain/metrics.ts, written over operation_views' columns;
 * lib/store/queries/metrics.itest.ts holds the list's counts against the metrics' figures.
 */
export { METRIC_NAMES, METRIC_PARTS };

type Where = Prisma.OperationViewWhereInput;

const claimed: Where = { claimedOutcome: { not: null } };
const claimedOther: Where = { AND: [claimed, { claimedOutcome: { not: "success" } }] };
const reviewerFailure: Where = { review: { in: ["not_applied", "retracted"] } };

function parts(metric: MetricName): { scope: Where; hit: Where; miss: Where; unknown: Where } {
  switch (metric) {
    case "grounding_accuracy":
      return {
        scope: claimed,
        hit: { OR: [{ claimedOutcome: "success", actual: "held" }, { AND: [claimedOther, { actual: "not_held" }] }] },
        miss: { OR: [{ claimedOutcome: "success", actual: "not_held" }, { AND: [claimedOther, { actual: "held" }] }] },
        unknown: { AND: [claimed, { actual: "unknown" }] },
      };
    case "silent_failure_rate":
      return {
        scope: { receiptStatus: "accepted" },
        hit: { receiptStatus: "accepted", actual: "not_held" },
        miss: { receiptStatus: "accepted", actual: "held" },
        unknown: { receiptStatus: "accepted", actual: "unknown" },
      };
    case "verification_precision":
      return {
        scope: { outcome: "divergent" },
        hit: { outcome: "divergent", review: "not_applied" },
        miss: { outcome: "divergent", review: { in: ["verified", "compensated"] } },
        unknown: { outcome: "divergent", review: { in: ["none", "retracted"] } },
      };
    case "verification_recall":
      return {
        scope: reviewerFailure,
        hit: { AND: [reviewerFailure, { outcome: "divergent" }] },
        miss: { AND: [reviewerFailure, { outcome: { not: "divergent" } }] },
        unknown: { review: "none", actual: "unknown" },
      };
    case "recovery_rate":
      return {
        scope: { outcome: { in: ["divergent", "rejected"] } },
        hit: { outcome: { in: ["divergent", "rejected"] }, recovered: true },
        miss: { outcome: { in: ["divergent", "rejected"] }, recovered: false },
        unknown: { operationId: { in: [] } },
      };
  }
}

/** The list filter for one part of one metric. */
export function metricWhere(metric: MetricName, part: MetricListPart): Where {
  const p = parts(metric);
  switch (part) {
    case "hit":
    case "miss":
    case "unknown":
      return p[part];
    case "n":
      return { OR: [p.hit, p.miss] };
    case "samples":
      // review IN (…) rather than <> 'none': the (review, created_seq) index finds the few reviewed rows.
      return { AND: [{ OR: [p.hit, p.miss] }, { auditSample: true, review: { in: ["verified", "not_applied", "compensated", "retracted"] } }] };
  }
}
