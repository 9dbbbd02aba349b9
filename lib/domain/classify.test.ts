import { describe, expect, it } from "vitest";
import fc from "fast-check";
import essay from "./fixtures/essay-x-post.json";
import { classify, comparedFacts, type OperationFacts, type StageFact } from "./classify";
import { deriveOperation, type StoredStage } from "./operation";
import { REASONS, RETRY_DECISIONS } from "./outcomes";
import { splitRecord } from "./stages";
import { operationRecordSchema, type CanonicalRead, type Receipt } from "./wire";

const T0 = "2026-08-28T10:00:00Z";
const LATER = "2026-08-28T10:05:00Z";
const EARLIER = "2026-08-28T09:55:00Z";
const FP = "sha256:aaaa";

let seq = 0;
const intent = (extra: Record<string, unknown> = {}): StageFact => ({
  stage: "intent",
  seq: ++seq,
  payload: { target: "social account", effect: "publish exactly one post", fingerprint: FP, ...extra },
});
const receipt = (extra: Partial<Receipt> = {}): StageFact => ({
  stage: "receipt",
  seq: ++seq,
  payload: { status: "accepted", receipt_id: "r-1", observed_at: T0, ...extra },
});
const read = (status: CanonicalRead["status"], extra: Partial<CanonicalRead> = {}): StageFact => ({
  stage: "canonical_read",
  seq: ++seq,
  payload: { status, observed_at: LATER, evidence: { object_id: "obj-1", fingerprint: FP }, ...extra },
});
const effects = (...list: [string, "observed" | "not_observed" | "unknown"][]): StageFact => ({
  stage: "side_effects",
  seq: ++seq,
  payload: list.map(([name, status]) => ({ name, status })),
});
const op = (stages: StageFact[], rest: Partial<OperationFacts> = {}): OperationFacts => ({ stages, ...rest });

/** Turns a wire record into facts the way the store does: split, then number in order. */
function factsFromRecord(record: Record<string, unknown>): OperationFacts {
  const parsed = operationRecordSchema.parse(record);
  return {
    tool: parsed.tool,
    idempotency: parsed.idempotency,
    stages: splitRecord(record).map((d, i) => ({ stage: d.stage, seq: i + 1, payload: d.payload }) as StageFact),
  };
}

describe("the essay's nine tests", () => {
  it("1: a matching canonical read is verified", () => {
    const c = classify(op([intent(), receipt(), read("match")]));
    expect(c.outcome).toBe("verified");
    expect(c.reason).toBe(REASONS.verified);
    expect(c.failure_category).toBeNull();
    expect(c.retry).toEqual({ automatic: false, safe_replay_available: false, decision: RETRY_DECISIONS.verified });
  });
  it("2: accepted write with unavailable read-back is uncertain", () => {
    const c = classify(op([intent(), receipt(), read("unavailable", { evidence: undefined })]));
    expect(c.outcome).toBe("uncertain");
    expect(c.reason).toBe(REASONS.readUnavailable);
    expect(c.failure_category).toBe(5);
  });
  it("3: accepted write with absent canonical effect is divergent", () => {
    const c = classify(op([intent(), receipt(), read("absent", { evidence: undefined })]));
    expect(c.outcome).toBe("divergent");
    expect(c.reason).toBe(REASONS.absent);
    expect(c.failure_category).toBe(4);
  });
  it("4: accepted write with conflicting canonical state is divergent", () => {
    const c = classify(op([intent(), receipt(), read("mismatch")]));
    expect(c.outcome).toBe("divergent");
    expect(c.reason).toBe(REASONS.mismatch);
    expect(c.failure_category).toBe(4);
  });
  it("5: contradictory side effects do not upgrade the outcome", () => {
    const c = classify(op([intent(), receipt(), read("absent"), effects(["quota decrement", "observed"], ["index entry", "observed"])]));
    expect(c.outcome).toBe("divergent");
    expect(c.observed_side_effects).toEqual(["quota decrement", "index entry"]);
  });
  it("6: an explicit boundary rejection is rejected", () => {
    const c = classify(op([intent(), receipt({ status: "rejected" })]));
    expect(c.outcome).toBe("rejected");
    expect(c.reason).toBe(REASONS.rejected);
    expect(c.failure_category).toBeNull();
    expect(c.retry.decision).toBe(RETRY_DECISIONS.rejected);
  });
  it("7: a match claimed without evidence is not verified", () => {
    const c = classify(op([intent(), receipt(), read("match", { evidence: undefined })]));
    expect(c.outcome).toBe("uncertain");
    expect(c.reason).toBe(REASONS.matchWithoutEvidence);
    expect(c.failure_category).toBe(5);
  });
  it("8: a canonical read timestamped before the receipt is not verified", () => {
    const stale = read("match", { observed_at: EARLIER });
    const c = classify(op([intent(), receipt(), stale]));
    expect(c.outcome).toBe("uncertain");
    expect(c.reason).toBe(REASONS.readUnavailable);
    expect(c.stale_read_seqs).toEqual([stale.seq]);
    expect(c.deciding_read_seq).toBeNull();
    expect(c.failure_category).toBe(5);
  });
  it("9: retry is blocked even when an idempotency key exists", () => {
    const idempotency = { enforced: true, key: "op-1" };
    for (const stages of [[receipt(), read("absent")], [receipt(), read("unavailable")]]) {
      const c = classify(op(stages, { idempotency }));
      expect(c.retry).toEqual({ automatic: false, safe_replay_available: true, decision: RETRY_DECISIONS.blocked });
    }
    const unenforced = classify(op([receipt(), read("absent")], { idempotency: { enforced: false, key: "op-1" } }));
    expect(unenforced.retry.safe_replay_available).toBe(false);
    const keyless = classify(op([receipt(), read("absent")], { idempotency: { enforced: true, key: null } }));
    expect(keyless.retry.safe_replay_available).toBe(false);
  });
});

describe("the essay's real case (lib/domain/fixtures/essay-x-post.json)", () => {
  it("classifies exactly as the essay prints", () => {
    const c = classify(factsFromRecord(essay.record));
    const { operation_id: _id, ...expected } = essay.expected;
    expect({
      outcome: c.outcome,
      reason: c.reason,
      failure_category: c.failure_category,
      observed_side_effects: c.observed_side_effects,
      retry: c.retry,
    }).toEqual(expected);
  });
});

describe("every rule", () => {
  it("no receipt → uncertain, whatever the reads say", () => {
    const c = classify(op([intent(), read("match")]));
    expect(c).toMatchObject({ outcome: "uncertain", reason: REASONS.noReceipt, failure_category: null });
    expect(c.retry.decision).toBe(RETRY_DECISIONS.blocked);
  });
  it("rejected, then a later match with evidence → divergent false failure, no category", () => {
    const c = classify(op([intent(), receipt({ status: "rejected" }), read("match")]));
    expect(c).toMatchObject({ outcome: "divergent", reason: REASONS.rejectedButPresent, failure_category: null });
  });
  it("rejected, then a match without evidence → uncertain", () => {
    const c = classify(op([receipt({ status: "rejected" }), read("match", { evidence: "" })]));
    expect(c).toMatchObject({ outcome: "uncertain", reason: REASONS.matchWithoutEvidence, failure_category: null });
  });
  it("rejected, with a match before the rejection → rejected (the stale read proves nothing)", () => {
    const c = classify(op([receipt({ status: "rejected" }), read("match", { observed_at: EARLIER })]));
    expect(c.outcome).toBe("rejected");
  });
  it("rejected with an absent read → rejected", () => {
    expect(classify(op([receipt({ status: "rejected" }), read("absent")])).outcome).toBe("rejected");
  });
  it("accepted, no read at all → uncertain, category 5", () => {
    expect(classify(op([intent(), receipt()]))).toMatchObject({ outcome: "uncertain", reason: REASONS.readUnavailable, failure_category: 5 });
  });
  it("several reads: the latest valid one wins, whatever the order recorded", () => {
    const first = read("absent", { observed_at: "2026-08-28T10:10:00Z" });
    const second = read("match", { observed_at: "2026-08-28T10:05:00Z" });
    const c = classify(op([intent(), receipt(), first, second]));
    expect(c.outcome).toBe("divergent");
    expect(c.deciding_read_seq).toBe(first.seq);
  });
  it("a later absent read overrides an earlier match", () => {
    const c = classify(op([intent(), receipt(), read("match", { observed_at: LATER }), read("absent", { observed_at: "2026-08-28T11:00:00Z" })]));
    expect(c.reason).toBe(REASONS.absent);
  });
  it("between reads with the same time, the one recorded later wins", () => {
    const a = read("absent");
    const b = read("match");
    expect(classify(op([receipt(), a, b])).deciding_read_seq).toBe(b.seq);
    expect(classify(op([receipt(), a, b])).outcome).toBe("verified");
  });
  it("a read at exactly the receipt's time is valid", () => {
    expect(classify(op([intent(), receipt(), read("match", { observed_at: T0 })])).outcome).toBe("verified");
  });
  it("time comparison honours offsets and sub-millisecond precision", () => {
    const r = receipt({ observed_at: "2026-08-28T10:00:00.0000005Z" });
    expect(classify(op([r, read("match", { observed_at: "2026-08-28T10:00:00.0000001Z" })])).outcome).toBe("uncertain");
    expect(classify(op([r, read("match", { observed_at: "2026-08-28T12:00:00.000001+02:00" })])).outcome).toBe("verified");
  });
  it("a stale match and a valid unavailable read → uncertain", () => {
    const c = classify(op([receipt(), read("match", { observed_at: EARLIER }), read("unavailable")]));
    expect(c.outcome).toBe("uncertain");
    expect(c.stale_read_seqs).toHaveLength(1);
  });
  it("the fingerprint differs → divergent, category 4", () => {
    const c = classify(op([intent(), receipt(), read("match", { evidence: { object_id: "o", fingerprint: "sha256:bbbb" } })]));
    expect(c).toMatchObject({ outcome: "divergent", reason: REASONS.fingerprintDiffers, failure_category: 4 });
  });
  it("an intent without a fingerprint: the object's presence is the evidence", () => {
    expect(classify(op([intent({ fingerprint: undefined }), receipt(), read("match")])).outcome).toBe("verified");
    expect(classify(op([intent({ fingerprint: undefined }), receipt(), read("match", { evidence: { object_id: "o" } })])).outcome).toBe("verified");
    expect(classify(op([intent({ fingerprint: "" }), receipt(), read("match", { evidence: { object_id: "o", fingerprint: "" } })])).outcome).toBe("verified");
  });
  it("partial execution with a match → divergent, category 3", () => {
    const c = classify(op([intent(), receipt({ partial: true }), read("match")]));
    expect(c).toMatchObject({ outcome: "divergent", reason: REASONS.partial, failure_category: 3 });
  });
  it("the fingerprint rule comes before the partial rule", () => {
    const c = classify(op([intent(), receipt({ partial: true }), read("match", { evidence: { fingerprint: "sha256:zz" } })]));
    expect(c).toMatchObject({ reason: REASONS.fingerprintDiffers, failure_category: 3 });
  });
  it("string evidence counts as evidence of presence, never as a fingerprint", () => {
    expect(classify(op([intent({ fingerprint: undefined }), receipt(), read("match", { evidence: "post 1234 visible on the profile" })])).outcome).toBe("verified");
    expect(classify(op([intent(), receipt(), read("match", { evidence: "post 1234 visible on the profile" })])).reason).toBe(REASONS.fingerprintMissing);
  });
  it("empty evidence does not count: empty string, empty object, empty ids", () => {
    for (const evidence of ["", {}, { object_id: "" }, { url: "https://example.test" }, null]) {
      expect(classify(op([receipt(), read("match", { evidence })])).reason).toBe(REASONS.matchWithoutEvidence);
    }
  });
  it("category 1: the receipt names another tool", () => {
    const c = classify(op([intent(), receipt({ tool: "social.delete" }), read("absent")], { tool: { name: "social.publish" } }));
    expect(c.failure_category).toBe(1);
    const same = classify(op([intent(), receipt({ tool: { name: "social.publish" } }), read("absent")], { tool: "social.publish" }));
    expect(same.failure_category).toBe(4);
  });
  it("category 2: the receipt's params differ from the intent's (key order does not matter)", () => {
    const c = classify(op([intent({ params: { text: "a", n: 1 } }), receipt({ params: { text: "b", n: 1 } }), read("absent")]));
    expect(c.failure_category).toBe(2);
    const same = classify(op([intent({ params: { text: "a", n: 1 } }), receipt({ params: { n: 1, text: "a" } }), read("absent")]));
    expect(same.failure_category).toBe(4);
  });
  it("verified and rejected carry no category even when params differ", () => {
    expect(classify(op([intent({ params: { a: 1 } }), receipt({ params: { a: 2 } }), read("match")])).failure_category).toBeNull();
    expect(classify(op([intent({ params: { a: 1 } }), receipt({ status: "rejected", params: { a: 2 } })])).failure_category).toBeNull();
  });
  it("side effects: observed in any observation, de-duplicated, first-seen order", () => {
    const c = classify(op([receipt(), read("match"), effects(["a", "not_observed"], ["b", "observed"]), effects(["a", "observed"], ["b", "observed"], ["c", "unknown"])]));
    expect(c.observed_side_effects).toEqual(["b", "a"]);
  });
});

describe("a match that shows nothing is not a verification (issue 54)", () => {
  const shown = [{ object_id: "obj-1" }, { object_id: "obj-1", fingerprint: "" }, { object_id: "obj-1", fingerprint: null }, { object_id: "obj-1", fingerprint: 7 }];
  it("the intent names a fingerprint, the read names the object but shows none → uncertain, category 5, blocked", () => {
    for (const evidence of shown) {
      const c = classify(op([intent(), receipt(), read("match", { evidence } as Partial<CanonicalRead>)]));
      expect(c, JSON.stringify(evidence)).toMatchObject({ outcome: "uncertain", reason: REASONS.fingerprintMissing, failure_category: 5 });
      expect(c.retry).toEqual({ automatic: false, safe_replay_available: false, decision: RETRY_DECISIONS.blocked });
    }
    expect(REASONS.fingerprintMissing).toBe("the read found the object but did not show its content to compare");
  });
  it("its retry decision is the uncertain one: a reviewed replay when an idempotency key is enforced", () => {
    const c = classify(op([intent(), receipt(), read("match", { evidence: { object_id: "o", fingerprint: "" } })], { idempotency: { enforced: true, key: "k" } }));
    expect(c.retry).toEqual({ automatic: false, safe_replay_available: true, decision: RETRY_DECISIONS.blocked });
  });
  it("it goes to review, and the agent's success claim is an overclaim", () => {
    const stored = (seq: number, stage: StoredStage["stage"], data: unknown, envelope: Record<string, unknown> | null = null): StoredStage => ({ seq, stage, data, envelope, observed_at: null, recorded_at: T0 });
    const state = deriveOperation("op-empty", [
      stored(1, "intent", { effect: "publish", fingerprint: FP }, { tool: "social.publish", claimed_outcome: "success" }),
      stored(2, "receipt", { status: "accepted", observed_at: T0 }),
      stored(3, "canonical_read", { status: "match", observed_at: LATER, evidence: { object_id: "o", fingerprint: "" } }),
    ]);
    expect(state.classification.outcome).toBe("uncertain");
    expect(state.needs_review).toBe(true);
    expect(state.overclaimed).toBe(true);
  });
  it("the same fingerprint is verified, another one divergent, as before", () => {
    expect(classify(op([intent(), receipt(), read("match", { evidence: { fingerprint: FP } })])).outcome).toBe("verified");
    expect(classify(op([intent(), receipt(), read("match", { evidence: { object_id: "o", fingerprint: "sha256:bbbb" } })])).reason).toBe(REASONS.fingerprintDiffers);
  });
  it("no evidence at all is still 'claimed without evidence' (the essay's test 7), not the missing fingerprint", () => {
    for (const evidence of [undefined, "", { fingerprint: "" }, { object_id: "", fingerprint: "" }]) {
      expect(classify(op([intent(), receipt(), read("match", { evidence })])).reason).toBe(REASONS.matchWithoutEvidence);
    }
  });
  it("a partial receipt stays divergent, and a rejected one with the object present stays divergent (only verified changes)", () => {
    const empty = { evidence: { object_id: "o", fingerprint: "" } };
    expect(classify(op([intent(), receipt({ partial: true }), read("match", empty)]))).toMatchObject({ outcome: "divergent", reason: REASONS.partial, failure_category: 3 });
    expect(classify(op([intent(), receipt({ status: "rejected" }), read("match", empty)]))).toMatchObject({ outcome: "divergent", reason: REASONS.rejectedButPresent });
  });
  it("a verifier's rule that takes a fingerprint expects one, even when the intent names none", () => {
    const verifierRead = (evidence: unknown): StageFact => ({ stage: "canonical_read", seq: ++seq, payload: { status: "match", observed_at: LATER, evidence } as CanonicalRead, expects_fingerprint: true });
    const noFp = intent({ fingerprint: undefined });
    expect(classify(op([noFp, receipt(), verifierRead({ object_id: "o" })])).reason).toBe(REASONS.fingerprintMissing);
    expect(classify(op([noFp, receipt(), verifierRead({ object_id: "o", fingerprint: "sha256:any" })])).outcome).toBe("verified");
    expect(classify(op([intent(), receipt(), verifierRead({ object_id: "o", fingerprint: "sha256:bbbb" })])).reason).toBe(REASONS.fingerprintDiffers);
  });
  it("what was compared: the missing fingerprint named, and presence only told apart", () => {
    const missing = comparedFacts(op([intent(), receipt(), read("match", { evidence: { object_id: "o", fingerprint: "" } })]));
    expect(missing.fingerprintMissing).toEqual({ intent: FP });
    expect(missing.presenceOnly).toBe(false);
    const compared = comparedFacts(op([intent(), receipt(), read("match")]));
    expect([compared.fingerprintMissing, compared.presenceOnly]).toEqual([null, false]);
    const presence = comparedFacts(op([intent({ fingerprint: undefined }), receipt(), read("match")]));
    expect([presence.fingerprintMissing, presence.presenceOnly]).toEqual([null, true]);
  });
});

// ---- properties -----------------------------------------------------------------------------

const instant = fc
  .integer({ min: 0, max: 20 })
  .map((m) => `2026-08-28T10:${String(m).padStart(2, "0")}:00Z`);
const evidenceArb = fc.oneof(
  fc.constant(undefined),
  fc.constant(""),
  fc.string({ minLength: 1, maxLength: 5 }),
  fc.record({ object_id: fc.constantFrom("o1", ""), fingerprint: fc.constantFrom(FP, "sha256:other", "", undefined) }, { requiredKeys: [] }),
);
const readArb = fc.record({
  status: fc.constantFrom("match", "absent", "mismatch", "unavailable"),
  observed_at: instant,
  evidence: evidenceArb,
});
const receiptArb = fc.record({
  status: fc.constantFrom("accepted", "rejected"),
  observed_at: instant,
  partial: fc.boolean(),
  params: fc.constantFrom({ t: 1 }, { t: 2 }),
  tool: fc.constantFrom("social.publish", "other.tool"),
});
const effectArb = fc.array(
  fc.record({ name: fc.constantFrom("quota", "index", "cache"), status: fc.constantFrom("observed", "not_observed", "unknown") }),
  { maxLength: 3 },
);
const factsArb = fc
  .record({
    intent: fc.option(fc.record({ fingerprint: fc.constantFrom(FP, undefined), params: fc.constantFrom({ t: 1 }, { t: 2 }) }), { nil: undefined }),
    receipt: fc.option(receiptArb, { nil: undefined }),
    // distinct read times: equal times are ordered by arrival on purpose (DOMAIN.md)
    reads: fc.uniqueArray(readArb, { maxLength: 4, selector: (r) => r.observed_at }),
    effects: fc.array(effectArb, { maxLength: 3 }),
    idempotency: fc.record({ enforced: fc.boolean(), key: fc.constantFrom("k", null) }),
  })
  .map(({ intent, receipt, reads, effects, idempotency }) => {
    const stages: StageFact[] = [];
    let n = 0;
    if (intent) stages.push({ stage: "intent", seq: ++n, payload: intent });
    if (receipt) stages.push({ stage: "receipt", seq: ++n, payload: receipt as Receipt });
    for (const r of reads) stages.push({ stage: "canonical_read", seq: ++n, payload: r as CanonicalRead });
    for (const e of effects) stages.push({ stage: "side_effects", seq: ++n, payload: e as never });
    return { tool: "social.publish", idempotency, stages } satisfies OperationFacts;
  });

const rank = { rejected: 0, uncertain: 1, divergent: 1, verified: 2 } as const;
const core = (c: ReturnType<typeof classify>) => ({ ...c, deciding_read_seq: undefined, stale_read_seqs: undefined, observed_side_effects: [...c.observed_side_effects].sort() });

describe("properties", () => {
  it("side effects never upgrade an outcome (and never change it)", () => {
    fc.assert(
      fc.property(factsArb, effectArb, (facts, extra) => {
        const without = classify({ ...facts, stages: facts.stages.filter((s) => s.stage !== "side_effects") });
        const withMore = classify({ ...facts, stages: [...facts.stages, { stage: "side_effects", seq: 99, payload: extra as never }] });
        expect(withMore.outcome).toBe(without.outcome);
        expect(withMore.reason).toBe(without.reason);
        expect(rank[withMore.outcome]).toBeLessThanOrEqual(rank[without.outcome]);
      }),
      { numRuns: 500 },
    );
  });
  it("the result does not depend on the order the stage records arrived in", () => {
    fc.assert(
      fc.property(factsArb, fc.infiniteStream(fc.nat()), (facts, rnd) => {
        const shuffled = [...facts.stages].map((s) => ({ s, k: rnd.next().value })).sort((a, b) => a.k - b.k);
        const renumbered = shuffled.map(({ s }, i) => ({ ...s, seq: i + 1 }) as StageFact);
        expect(core(classify({ ...facts, stages: renumbered }))).toEqual(core(classify(facts)));
      }),
      { numRuns: 500 },
    );
  });
  it("classify is deterministic and pure", () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        const before = JSON.stringify(facts);
        expect(classify(facts)).toEqual(classify(structuredClone(facts)));
        expect(JSON.stringify(facts)).toBe(before);
      }),
      { numRuns: 300 },
    );
  });
  it("a verified operation whose intent names a fingerprint was read with that very fingerprint", () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        const c = classify(facts);
        const fp = facts.stages.find((s) => s.stage === "intent")?.payload.fingerprint;
        if (c.outcome !== "verified" || !fp) return;
        const deciding = facts.stages.find((s) => s.seq === c.deciding_read_seq);
        expect((deciding?.payload as CanonicalRead).evidence).toMatchObject({ fingerprint: fp });
      }),
      { numRuns: 1000 },
    );
  });
  it("automatic retry is never allowed, and only uncertain/divergent may offer a safe replay", () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        const c = classify(facts);
        expect(c.retry.automatic).toBe(false);
        if (c.retry.safe_replay_available) expect(["uncertain", "divergent"]).toContain(c.outcome);
        if (c.failure_category !== null) expect(["uncertain", "divergent"]).toContain(c.outcome);
      }),
      { numRuns: 300 },
    );
  });
});

describe("what the verdict compared, for showing in place", () => {
  it("names both tools when the receipt ran another, and nothing when they agree or one is missing", () => {
    expect(comparedFacts(op([intent(), receipt({ tool: { name: "payments.charge" } })], { tool: { name: "payments.refund" } })).wrongTool).toEqual({ operation: "payments.refund", receipt: "payments.charge" });
    expect(comparedFacts(op([intent(), receipt({ tool: "payments.refund" })], { tool: { name: "payments.refund" } })).wrongTool).toBeNull();
    expect(comparedFacts(op([intent(), receipt()], { tool: { name: "payments.refund" } })).wrongTool).toBeNull();
  });

  it("names both fingerprints when the deciding read's differs from the intent's, the verdict agreeing", () => {
    const facts = op([intent(), receipt(), read("match", { evidence: { object_id: "obj-1", fingerprint: "sha256:bbbb" } })]);
    expect(comparedFacts(facts).fingerprintDiffers).toEqual({ intent: FP, read: "sha256:bbbb" });
    expect(classify(facts).reason).toBe(REASONS.fingerprintDiffers);
    expect(comparedFacts(op([intent(), receipt(), read("match")])).fingerprintDiffers).toBeNull();
    // Only the deciding read counts: a stale read before the receipt is not compared.
    const stale = op([intent(), receipt(), read("match", { observed_at: EARLIER, evidence: { object_id: "o", fingerprint: "sha256:cccc" } })]);
    expect(comparedFacts(stale).fingerprintDiffers).toBeNull();
  });
});
