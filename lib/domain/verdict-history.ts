import { classify, type StageFact } from "./classify";
import { compareInstants } from "./time";
import { replayCorrections, type CorrectionFact } from "./corrections";
import type { EffectiveOutcome, Outcome } from "./outcomes";
import { stageFact, type StoredStage } from "./operation";
import type { Idempotency } from "./outcomes";

/**
 * The verdict after each stage record and correction, in chain order (docs/API.md "Read":
 * `verdict_history`). A read that moved a standing verdict — divergent, or uncertain with a receipt
 * already recorded — to verified is marked `changed_by_later_read`, so a reviewer sees that the
 * verdict rests on a read sent after the fact, and by whom (the entry's record says who sent it).
 * "Standing" means as of the end of an earlier transaction: a receipt and its read sent together
 * are one act, not a verdict changed afterwards.
 */
export type HistoryStep =
  | { kind: "stage"; seq: number; recorded_at: string; stage: StoredStage["stage"] }
  | { kind: "correction"; seq: number; recorded_at: string; correction: CorrectionFact };

export type VerdictEntry = {
  seq: number;
  kind: "stage" | "correction";
  /** The stage recorded, or the correction's action. */
  what: string;
  recorded_at: string;
  outcome: Outcome;
  reason: string;
  effective_outcome: EffectiveOutcome;
  /** The effective outcome differs from the one before this record. */
  changed: boolean;
  changed_by_later_read: boolean;
};

type Standing = { effective: EffectiveOutcome; hasReceipt: boolean };

export function verdictHistory(stages: StoredStage[], corrections: (CorrectionFact & { seq: number; recorded_at: string })[]): VerdictEntry[] {
  const steps: HistoryStep[] = [
    ...stages.map((s) => ({ kind: "stage" as const, seq: s.seq, recorded_at: s.recorded_at, stage: s.stage })),
    ...corrections.map((c) => ({ kind: "correction" as const, seq: c.seq, recorded_at: c.recorded_at, correction: c })),
  ].sort((a, b) => a.seq - b.seq);
  const bySeq = new Map(stages.map((s) => [s.seq, s]));
  // The outcome depends on the first intent, the first receipt and the deciding read (the latest
  // read at or after the receipt) only, so each step classifies those three facts: linear in the
  // number of records, where classifying every prefix in full would be quadratic.
  type ReadFact = Extract<StageFact, { stage: "canonical_read" }>;
  let intent: StageFact | null = null;
  let receipt: Extract<StageFact, { stage: "receipt" }> | null = null;
  const reads: ReadFact[] = [];
  let deciding: ReadFact | null = null;
  const better = (best: ReadFact | null, r: ReadFact): ReadFact | null => {
    if (!receipt || compareInstants(r.payload.observed_at, receipt.payload.observed_at) < 0) return best;
    if (!best) return r;
    const c = compareInstants(r.payload.observed_at, best.payload.observed_at);
    return c > 0 || (c === 0 && r.seq > best.seq) ? r : best;
  };
  const envelope: Record<string, unknown> = {};
  const applied: CorrectionFact[] = [];
  let classification: ReturnType<typeof classify> | null = null;
  let previous: EffectiveOutcome | null = null;
  let hasReceipt = false;
  let groupAt: string | null = null;
  let standing: Standing | null = null;
  const out: VerdictEntry[] = [];
  for (const step of steps) {
    if (step.recorded_at !== groupAt) {
      standing = previous === null ? null : { effective: previous, hasReceipt };
      groupAt = step.recorded_at;
    }
    if (step.kind === "stage") {
      const s = bySeq.get(step.seq)!;
      const fact = stageFact(s);
      if (fact.stage === "intent") intent ??= fact;
      else if (fact.stage === "receipt" && !receipt) {
        receipt = fact;
        hasReceipt = true;
        for (const r of reads) deciding = better(deciding, r);
      } else if (fact.stage === "canonical_read") {
        reads.push(fact);
        deciding = better(deciding, fact);
      }
      // The first value received for each key, as mergeEnvelopes decides it.
      for (const [k, v] of Object.entries(s.envelope ?? {})) if (!Object.hasOwn(envelope, k)) envelope[k] = v;
      const facts: StageFact[] = [];
      for (const f of [intent, receipt, deciding]) if (f) facts.push(f);
      classification = classify({ tool: envelope.tool, idempotency: envelope.idempotency as Idempotency, stages: facts });
    } else {
      applied.push(step.correction);
    }
    if (!classification) continue; // a correction before any stage: not a state an operation can be in
    const effective = replayCorrections(classification.outcome, applied).outcome;
    const byRead =
      step.kind === "stage" &&
      step.stage === "canonical_read" &&
      effective === "verified" &&
      previous !== "verified" &&
      standing !== null &&
      (standing.effective === "divergent" || (standing.effective === "uncertain" && standing.hasReceipt));
    out.push({
      seq: step.seq,
      kind: step.kind,
      what: step.kind === "stage" ? step.stage : step.correction.action,
      recorded_at: step.recorded_at,
      outcome: classification.outcome,
      reason: classification.reason,
      effective_outcome: effective,
      changed: previous !== null && previous !== effective,
      changed_by_later_read: byRead,
    });
    previous = effective;
  }
  return out;
}
