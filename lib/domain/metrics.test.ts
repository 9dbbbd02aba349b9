import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { CorrectionFact } from "./corrections";
import {
  computeMetrics,
  isDrawn,
  isRecovered,
  metricFacts,
  metricPart,
  recoveredBy,
  sampleDraw,
  wilson,
  type MetricFacts,
  type RecoveryCandidate,
} from "./metrics";
import { deriveOperation, type StoredStage } from "./operation";
import { operationRecordSchema } from "./wire";

const T0 = "2026-08-28T10:00:00Z";
const T1 = "2026-08-28T10:05:00Z";

/** Stored stages of one record, the way ingest splits it (envelope on the first stage). */
function stages(record: Record<string, unknown>): StoredStage[] {
  const out: StoredStage[] = [];
  const { operation_id: _id, intent, receipt, canonical_read, side_effects, ...envelope } = record;
  let seq = 1;
  const push = (stage: StoredStage["stage"], data: unknown, observed: string | null) =>
    out.push({ seq: seq++, stage, observed_at: observed, recorded_at: T1, data, envelope: out.length ? null : envelope });
  if (intent) push("intent", intent, null);
  if (receipt) push("receipt", receipt, (receipt as { observed_at: string }).observed_at);
  if (canonical_read) push("canonical_read", canonical_read, (canonical_read as { observed_at: string }).observed_at);
  if (side_effects) push("side_effects", side_effects, null);
  return out;
}

const accepted = { status: "accepted", observed_at: T0 };
const read = (status: string, evidence: unknown = { object_id: "obj-1" }) => ({ status, observed_at: T1, evidence });

/** Facts of an operation made from a wire record and corrections, through the real derivation. */
function factsOf(record: Record<string, unknown>, corrections: CorrectionFact[] = [], extra = { recovered: false, sampled: false }): MetricFacts {
  expect(operationRecordSchema.safeParse({ operation_id: "op", ...record }).success).toBe(true);
  return metricFacts(deriveOperation("op", stages({ operation_id: "op", ...record }), corrections), extra);
}
const resolve = (outcome: "verified" | "not_applied" | "compensated", id = "c1"): CorrectionFact => ({ id, action: "resolve", outcome });
const retract: CorrectionFact = { id: "c2", action: "retract", outcome: null };
const reopen: CorrectionFact = { id: "c3", action: "reopen", outcome: null };

describe("the truth of one operation", () => {
  it.each([
    ["verified by its read", { receipt: accepted, canonical_read: read("match") }, [], "held"],
    ["accepted, effect absent", { receipt: accepted, canonical_read: read("absent") }, [], "not_held"],
    ["rejected", { receipt: { status: "rejected", observed_at: T0 } }, [], "not_held"],
    ["read unavailable: unknown", { receipt: accepted, canonical_read: read("unavailable") }, [], "unknown"],
    ["no receipt: unknown", { intent: { effect: "x" } }, [], "unknown"],
    ["uncertain resolved verified", { receipt: accepted }, [resolve("verified")], "held"],
    ["divergent resolved compensated: held (then undone)", { receipt: accepted, canonical_read: read("absent") }, [resolve("compensated")], "held"],
    ["divergent resolved not_applied", { receipt: accepted, canonical_read: read("absent") }, [resolve("not_applied")], "not_held"],
    ["divergent resolved verified (a false alarm)", { receipt: accepted, canonical_read: read("absent") }, [resolve("verified")], "held"],
    ["resolved, then reopened: back to the verdict", { receipt: accepted }, [resolve("verified"), reopen], "unknown"],
    ["verified, success retracted", { receipt: accepted, canonical_read: read("match") }, [retract], "not_held"],
    ["a false failure (rejected, effect present) held", { receipt: { status: "rejected", observed_at: T0 }, canonical_read: read("match") }, [], "held"],
  ] as const)("%s", (_n, record, corrections, actual) => {
    expect(factsOf(record, [...corrections]).actual).toBe(actual);
  });

  it("reads claim, receipt, verdict and the reviewer's act", () => {
    const f = factsOf({ claimed_outcome: "success", receipt: accepted, canonical_read: read("absent") }, [resolve("not_applied")]);
    expect(f).toEqual({ claim: "success", actual: "not_held", accepted: true, verdict: "divergent", review: "not_applied", recovered: false, sampled: false });
    expect(factsOf({ claimed_outcome: "failed", receipt: accepted }).claim).toBe("other");
    expect(factsOf({ receipt: accepted }).claim).toBe("none");
    // The verdict is the classification before corrections.
    expect(factsOf({ receipt: accepted, canonical_read: read("match") }, [retract]).verdict).toBe("verified");
  });
});

const base: MetricFacts = { claim: "success", actual: "held", accepted: true, verdict: "verified", review: "none", recovered: false, sampled: false };
const f = (more: Partial<MetricFacts>): MetricFacts => ({ ...base, ...more });

describe("which part of each metric an operation is", () => {
  it("Metric 1: no claim is left out; unknown actual counted apart", () => {
    expect(metricPart("grounding_accuracy", f({ claim: "none" }))).toBeNull();
    expect(metricPart("grounding_accuracy", f({ actual: "unknown" }))).toBe("unknown");
    expect(metricPart("grounding_accuracy", f({}))).toBe("hit");
    expect(metricPart("grounding_accuracy", f({ actual: "not_held" }))).toBe("miss");
    expect(metricPart("grounding_accuracy", f({ claim: "other", actual: "not_held" }))).toBe("hit");
    expect(metricPart("grounding_accuracy", f({ claim: "other", actual: "held" }))).toBe("miss");
  });
  it("Metric 2: accepted receipts only; the event is an effect that did not hold", () => {
    expect(metricPart("silent_failure_rate", f({ accepted: false, actual: "not_held" }))).toBeNull();
    expect(metricPart("silent_failure_rate", f({ actual: "not_held" }))).toBe("hit");
    expect(metricPart("silent_failure_rate", f({}))).toBe("miss");
    expect(metricPart("silent_failure_rate", f({ actual: "unknown" }))).toBe("unknown");
  });
  it("Metric 3: divergent verdicts a reviewer resolved; not_applied confirms, verified and compensated refute", () => {
    expect(metricPart("verification_precision", f({ verdict: "verified" }))).toBeNull();
    expect(metricPart("verification_precision", f({ verdict: "rejected", review: "not_applied" }))).toBeNull();
    expect(metricPart("verification_precision", f({ verdict: "divergent", review: "not_applied" }))).toBe("hit");
    expect(metricPart("verification_precision", f({ verdict: "divergent", review: "verified" }))).toBe("miss");
    expect(metricPart("verification_precision", f({ verdict: "divergent", review: "compensated" }))).toBe("miss");
    expect(metricPart("verification_precision", f({ verdict: "divergent", review: "none" }))).toBe("unknown");
    expect(metricPart("verification_precision", f({ verdict: "divergent", review: "retracted" }))).toBe("unknown");
  });
  it("Metric 4: failures known from reviewers; a retracted audit sample is a miss", () => {
    expect(metricPart("verification_recall", f({ verdict: "divergent", review: "not_applied" }))).toBe("hit");
    expect(metricPart("verification_recall", f({ verdict: "uncertain", review: "not_applied" }))).toBe("miss");
    expect(metricPart("verification_recall", f({ verdict: "verified", review: "retracted", sampled: true }))).toBe("miss");
    expect(metricPart("verification_recall", f({ verdict: "divergent", actual: "not_held" }))).toBeNull();
    expect(metricPart("verification_recall", f({ verdict: "uncertain", actual: "unknown" }))).toBe("unknown");
    expect(metricPart("verification_recall", f({ verdict: "divergent", review: "compensated" }))).toBeNull();
  });
  it("Metric 5: detected failures (divergent or rejected)", () => {
    expect(metricPart("recovery_rate", f({ verdict: "verified" }))).toBeNull();
    expect(metricPart("recovery_rate", f({ verdict: "uncertain" }))).toBeNull();
    expect(metricPart("recovery_rate", f({ verdict: "rejected", recovered: true }))).toBe("hit");
    expect(metricPart("recovery_rate", f({ verdict: "divergent" }))).toBe("miss");
  });
});

describe("computeMetrics", () => {
  it("is empty and honest on no operations", () => {
    const m = computeMetrics([]);
    for (const metric of Object.values(m)) expect(metric).toMatchObject({ value: null, hit: 0, n: 0, interval: null, unknown: 0, from_samples: 0 });
  });

  it("counts a hand-made set", () => {
    const m = computeMetrics([
      { facts: f({}), count: 6 }, // claimed success, verified: M1 hit, M2 miss
      { facts: f({ verdict: "divergent", actual: "not_held", review: "not_applied" }), count: 3 }, // overclaim caught
      { facts: f({ verdict: "divergent", actual: "held", review: "verified" }), count: 1 }, // false alarm
      { facts: f({ verdict: "uncertain", actual: "unknown" }), count: 2 },
      { facts: f({ claim: "none", verdict: "rejected", accepted: false, actual: "not_held", recovered: true }), count: 2 },
      { facts: f({ verdict: "verified", actual: "not_held", review: "retracted", sampled: true }), count: 1 }, // audit found a miss
      { facts: f({ verdict: "verified", actual: "held", review: "verified", sampled: true }), count: 4 }, // audit confirmed
      { facts: f({ claim: "none" }), count: 0 },
    ]);
    expect(m.grounding_accuracy).toMatchObject({ hit: 11, n: 15, unknown: 2, from_samples: 5 });
    expect(m.silent_failure_rate).toMatchObject({ hit: 4, n: 15, unknown: 2, from_samples: 5 });
    expect(m.verification_precision).toMatchObject({ hit: 3, n: 4, unknown: 0, from_samples: 0 });
    expect(m.verification_recall).toMatchObject({ hit: 3, n: 4, unknown: 2, from_samples: 1 });
    expect(m.recovery_rate).toMatchObject({ hit: 2, n: 6, unknown: 0 });
    expect(m.recovery_rate.value).toBeCloseTo(1 / 3);
  });

  it("a sample not yet reviewed does not count as resting on samples", () => {
    const m = computeMetrics([{ facts: f({ sampled: true }), count: 3 }]);
    expect(m.grounding_accuracy).toMatchObject({ n: 3, from_samples: 0 });
  });
});

describe("the Wilson interval", () => {
  it("matches published values", () => {
    // 8 of 10: 0.4902–0.9433 (Newcombe 1998 style check); 0 of 10: 0–0.2775; 10 of 10: 0.7225–1.
    const a = wilson(8, 10)!;
    expect(a.low).toBeCloseTo(0.4902, 4);
    expect(a.high).toBeCloseTo(0.9433, 4);
    expect(wilson(0, 10)).toEqual({ low: 0, high: expect.closeTo(0.2775, 4) });
    expect(wilson(10, 10)).toEqual({ low: expect.closeTo(0.7225, 4), high: 1 });
    expect(wilson(0, 0)).toBeNull();
  });
  it("always holds the point estimate, inside [0, 1]", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100000 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, share) => {
        const hit = Math.floor(share * n);
        const w = wilson(hit, n)!;
        expect(w.low).toBeGreaterThanOrEqual(0);
        expect(w.high).toBeLessThanOrEqual(1);
        expect(w.low).toBeLessThanOrEqual(hit / n + 1e-12);
        expect(w.high).toBeGreaterThanOrEqual(hit / n - 1e-12);
      }),
    );
  });
});

describe("recovery", () => {
  const failed: RecoveryCandidate = { operation_id: "a", created_seq: 10, trajectory_id: "t", tool: "db.insert", fingerprint: "sha256:x", effective_outcome: "divergent", recovers: [] };
  const later = (more: Partial<RecoveryCandidate>): RecoveryCandidate => ({ ...failed, operation_id: "b", created_seq: 20, effective_outcome: "verified", ...more });

  it("by a later verified operation with the same trajectory, tool and fingerprint", () => {
    expect(recoveredBy(failed, later({}))).toBe(true);
    expect(recoveredBy(failed, later({ effective_outcome: "uncertain" }))).toBe(false);
    expect(recoveredBy(failed, later({ created_seq: 5 }))).toBe(false);
    expect(recoveredBy(failed, later({ tool: "db.update" }))).toBe(false);
    expect(recoveredBy(failed, later({ fingerprint: "sha256:y" }))).toBe(false);
    expect(recoveredBy(failed, later({ trajectory_id: "u" }))).toBe(false);
    // A missing key never matches, even when both lack it.
    expect(recoveredBy({ ...failed, fingerprint: null }, later({ fingerprint: null }))).toBe(false);
  });
  it("by a later verified operation naming it in recovers, whatever its key", () => {
    expect(recoveredBy(failed, later({ recovers: ["a"], tool: "other", trajectory_id: null, fingerprint: null }))).toBe(true);
    expect(recoveredBy(failed, later({ recovers: ["a"], effective_outcome: "divergent" }))).toBe(false);
  });
  it("or by a reviewer's compensation; never for what was not a detected failure", () => {
    expect(isRecovered({ ...failed, verdict: "divergent", review: "compensated" }, [])).toBe(true);
    expect(isRecovered({ ...failed, verdict: "rejected", review: "none" }, [later({})])).toBe(true);
    expect(isRecovered({ ...failed, verdict: "uncertain", review: "none" }, [later({})])).toBe(false);
    expect(isRecovered({ ...failed, verdict: "divergent", review: "none" }, [])).toBe(false);
  });
});

describe("the recovers envelope field", () => {
  it("is a list of operation ids, validated, and read into the state", () => {
    expect(operationRecordSchema.safeParse({ operation_id: "b", recovers: ["a"], intent: {} }).success).toBe(true);
    expect(operationRecordSchema.safeParse({ operation_id: "b", recovers: "a", intent: {} }).success).toBe(false);
    expect(operationRecordSchema.safeParse({ operation_id: "b", recovers: ["has space"], intent: {} }).success).toBe(false);
    const s = deriveOperation("b", stages({ operation_id: "b", recovers: ["a", "a", "c"], intent: { fingerprint: "sha256:x" } }));
    expect(s.recovers).toEqual(["a", "c"]);
    expect(s.fingerprint).toBe("sha256:x");
  });
});

describe("audit sampling", () => {
  it("is deterministic and close to the rate", () => {
    expect(sampleDraw("op-1")).toBe(sampleDraw("op-1"));
    expect(isDrawn("op-1", 0)).toBe(false);
    expect(isDrawn("op-1", 1)).toBe(true);
    let drawn = 0;
    for (let i = 0; i < 20000; i++) if (isDrawn(`op-${i}`, 0.1)) drawn++;
    expect(drawn / 20000).toBeGreaterThan(0.09);
    expect(drawn / 20000).toBeLessThan(0.11);
  });
});
