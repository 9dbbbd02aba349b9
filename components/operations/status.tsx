import type { Review } from "@/lib/domain/metrics";
import type { EffectiveOutcome, Outcome } from "@/lib/domain/outcomes";
import { statusLine, type StatusAct } from "@/lib/domain/status";

/**
 * An operation's status where its outcome and reason appear: the reason, or, once a reviewer
 * acted, the act with who and when and what it overrides (lib/domain/status.ts).
 */
export function StatusText({ op, act, className }: { op: { outcome: string; reason: string; effective_outcome: string; review: string }; act: StatusAct | null | undefined; className?: string }) {
  const s = statusLine({ outcome: op.outcome as Outcome, reason: op.reason, effective_outcome: op.effective_outcome as EffectiveOutcome, review: op.review as Review, act: act ?? null });
  return <span className={className} data-corrected={s.corrected || undefined}>{s.text}</span>;
}
