import type { CallKind } from "./call-kind";
import { jsonEqual } from "./hash";
import { isPlainObject } from "./json";
import {
  REASONS,
  retryDecision,
  type FailureCategory,
  type Idempotency,
  type Outcome,
  type RetryDecision,
} from "./outcomes";
import { compareInstants, isRfc3339 } from "./time";
import type { CanonicalRead, Evidence, Intent, Receipt, SideEffect } from "./wire";

/** One recorded stage observation, as classification sees it. `seq` orders them as recorded. */
export type StageFact =
  | { stage: "intent"; seq: number; payload: Intent }
  | { stage: "receipt"; seq: number; payload: Receipt }
  | {
      stage: "canonical_read";
      seq: number;
      payload: CanonicalRead;
      /**
       * Set only on reads a verifier of Reconcile's own made (known by the sender, never by the
       * payload): until this instant an `absent` read leaves the operation uncertain.
       */
      window_closes_at?: string | null;
      /**
       * Set only on reads a verifier of Reconcile's own made whose deciding rule takes a
       * fingerprint from the answer: a match must then show one, whether or not the intent names one.
       */
      expects_fingerprint?: boolean;
    }
  | { stage: "side_effects"; seq: number; payload: SideEffect[] };

export type OperationFacts = {
  /** The operation's tool (envelope `tool`), a name or `{ name }`. */
  tool?: unknown;
  idempotency?: Idempotency;
  /** read, idempotent or write (call-kind.ts): what a repeat would do, for the retry decision. */
  kind?: CallKind;
  stages: StageFact[];
};

export type Classification = {
  outcome: Outcome;
  reason: string;
  failure_category: FailureCategory | null;
  observed_side_effects: string[];
  retry: RetryDecision;
  /** The canonical read that decided the outcome (latest valid), if any. */
  deciding_read_seq: number | null;
  /** Reads observed before the receipt: kept on the timeline, proving nothing about the write. */
  stale_read_seqs: number[];
};

export function hasEvidence(evidence: Evidence | null | undefined): boolean {
  if (typeof evidence === "string") return evidence.length > 0;
  if (!isPlainObject(evidence)) return false;
  return nonEmpty(evidence.object_id) || nonEmpty(evidence.fingerprint);
}

function nonEmpty(v: unknown): boolean {
  return typeof v === "string" && v.length > 0;
}

function evidenceFingerprint(evidence: Evidence | null | undefined): string | null {
  return isPlainObject(evidence) && nonEmpty(evidence.fingerprint) ? (evidence.fingerprint as string) : null;
}

export function toolName(tool: unknown): string | null {
  if (typeof tool === "string") return tool.length ? tool : null;
  if (isPlainObject(tool) && nonEmpty(tool.name)) return tool.name as string;
  return null;
}

/**
 * The latest valid read: observed at or after the receipt; between equal times the one
 * recorded later (higher seq) wins.
 */
function latestValidRead(
  reads: Extract<StageFact, { stage: "canonical_read" }>[],
  receipt: Receipt,
): Extract<StageFact, { stage: "canonical_read" }> | null {
  let best: Extract<StageFact, { stage: "canonical_read" }> | null = null;
  for (const r of reads) {
    if (compareInstants(r.payload.observed_at, receipt.observed_at) < 0) continue;
    if (!best) {
      best = r;
      continue;
    }
    const c = compareInstants(r.payload.observed_at, best.payload.observed_at);
    if (c > 0 || (c === 0 && r.seq > best.seq)) best = r;
  }
  return best;
}

/** Whether a verifier's read was made before the end of its observation window. */
function observedInsideWindow(read: Extract<StageFact, { stage: "canonical_read" }> | null): boolean {
  const closes = read?.window_closes_at;
  if (!read || typeof closes !== "string" || !isRfc3339(closes)) return false;
  return compareInstants(read.payload.observed_at, closes) < 0;
}

/** Names of side effects observed in any observation, in the order first seen. */
function observedSideEffects(stages: StageFact[]): string[] {
  const names = new Set<string>();
  for (const s of stages) {
    if (s.stage !== "side_effects") continue;
    for (const e of s.payload) if (e.status === "observed") names.add(e.name);
  }
  return [...names];
}

/**
 * What the verdict compares, found once: the stages, the deciding read (the latest valid one
 * after the receipt), the receipt's tool against the operation's, and the intent's fingerprint
 * against the deciding read's evidence. classify decides on these; the operation page shows
 * them in place, the two values side by side.
 */
export function comparedFacts(facts: OperationFacts) {
  const stages = [...facts.stages].sort((a, b) => a.seq - b.seq);
  const intent = stages.find((s) => s.stage === "intent")?.payload as Intent | undefined;
  const receipt = stages.find((s) => s.stage === "receipt")?.payload as Receipt | undefined;
  const reads = stages.filter((s): s is Extract<StageFact, { stage: "canonical_read" }> => s.stage === "canonical_read");
  const read = receipt ? latestValidRead(reads, receipt) : null;
  const receiptTool = receipt ? toolName(receipt.tool) : null;
  const opTool = toolName(facts.tool);
  const intentFp = nonEmpty(intent?.fingerprint) ? intent!.fingerprint! : null;
  const readFp = evidenceFingerprint(read?.payload.evidence);
  const expectsFp = intentFp !== null || read?.expects_fingerprint === true;
  const shownMatch = read?.payload.status === "match" && hasEvidence(read.payload.evidence);
  return {
    stages,
    intent,
    receipt,
    reads,
    read,
    /** The receipt names another tool than the operation's (failure category 1). */
    wrongTool: receiptTool !== null && opTool !== null && receiptTool !== opTool ? { operation: opTool, receipt: receiptTool } : null,
    /** The deciding read's object carries another fingerprint than the intent's. */
    fingerprintDiffers: intentFp !== null && readFp !== null && intentFp !== readFp ? { intent: intentFp, read: readFp } : null,
    /**
     * The deciding read is a match naming the object, but without the fingerprint the intent (or
     * the verifier's rule) expects: it showed nothing to compare (issue 54).
     */
    fingerprintMissing: shownMatch && expectsFp && readFp === null ? { intent: intentFp } : null,
    /** A match with evidence for an intent that names no fingerprint: nothing was compared, the object's presence is the evidence. */
    presenceOnly: shownMatch && intentFp === null,
  };
}

/** DOMAIN.md "Classification": a pure function of the recorded stages. */
export function classify(facts: OperationFacts): Classification {
  const { stages, intent, receipt, reads, read, wrongTool, fingerprintDiffers, fingerprintMissing } = comparedFacts(facts);
  const observed = observedSideEffects(stages);

  const result = (
    outcome: Outcome,
    reason: string,
    category: FailureCategory | null,
    deciding: number | null,
    stale: number[],
  ): Classification => ({
    outcome,
    reason,
    failure_category: outcome === "uncertain" || outcome === "divergent" ? category : null,
    observed_side_effects: observed,
    retry: retryDecision(outcome, facts.idempotency, facts.kind),
    deciding_read_seq: deciding,
    stale_read_seqs: stale,
  });

  if (!receipt) return result("uncertain", REASONS.noReceipt, null, null, []);

  const stale = reads.filter((r) => compareInstants(r.payload.observed_at, receipt.observed_at) < 0).map((r) => r.seq);
  const deciding = read?.seq ?? null;
  const evidence = read?.payload.evidence;

  // Failure categories 1–3 depend only on intent, receipt and operation; 4–5 on the deciding read.
  const wrongParams = isPlainObject(intent?.params) && isPlainObject(receipt.params) && !jsonEqual(intent!.params, receipt.params);
  const partial = receipt.partial === true;
  const accepted = receipt.status === "accepted";
  const status = read?.payload.status;
  // A verifier's `absent` read inside its observation window decides nothing yet (VERIFIERS.md).
  const windowOpen = accepted && status === "absent" && observedInsideWindow(read);
  const withoutEffect = accepted && ((status === "absent" && !windowOpen) || status === "mismatch" || (status === "match" && hasEvidence(evidence) && fingerprintDiffers !== null));
  const noVerification = accepted && (!read || status === "unavailable" || windowOpen || (status === "match" && (!hasEvidence(evidence) || fingerprintMissing !== null)));
  const category: FailureCategory | null = wrongTool ? 1 : wrongParams ? 2 : partial ? 3 : withoutEffect ? 4 : noVerification ? 5 : null;

  if (!accepted) {
    if (status === "match" && hasEvidence(evidence)) return result("divergent", REASONS.rejectedButPresent, null, deciding, stale);
    if (status === "match") return result("uncertain", REASONS.matchWithoutEvidence, category, deciding, stale);
    return result("rejected", REASONS.rejected, null, deciding, stale);
  }
  if (!read || status === "unavailable") return result("uncertain", REASONS.readUnavailable, category, deciding, stale);
  if (windowOpen) return result("uncertain", REASONS.windowOpen, category, deciding, stale);
  if (status === "absent") return result("divergent", REASONS.absent, category, deciding, stale);
  if (status === "mismatch") return result("divergent", REASONS.mismatch, category, deciding, stale);
  if (!hasEvidence(evidence)) return result("uncertain", REASONS.matchWithoutEvidence, category, deciding, stale);
  if (fingerprintDiffers) return result("divergent", REASONS.fingerprintDiffers, category, deciding, stale);
  if (partial) return result("divergent", REASONS.partial, category, deciding, stale);
  // Verified only on the fingerprint expected, when one is: a match that shows none is no verification.
  if (fingerprintMissing) return result("uncertain", REASONS.fingerprintMissing, category, deciding, stale);
  return result("verified", REASONS.verified, null, deciding, stale);
}
