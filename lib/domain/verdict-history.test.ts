import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CorrectionFact } from "./corrections";
import { deriveOperation, type StoredStage } from "./operation";
import { verdictHistory } from "./verdict-history";

const T1 = "2026-08-28T10:00:00.000Z";
const T2 = "2026-08-28T10:10:00.000Z";
const T3 = "2026-08-28T10:20:00.000Z";
const stage = (seq: number, recorded_at: string, s: StoredStage["stage"], data: unknown, envelope: Record<string, unknown> | null = null): StoredStage => ({
  seq,
  stage: s,
  observed_at: null,
  recorded_at,
  data,
  envelope,
});
const receipt = { status: "accepted", observed_at: "2026-08-28T10:00:00Z", receipt_id: "r1" };
const absent = { status: "absent", observed_at: "2026-08-28T10:05:00Z" };
const match = (at = "2026-08-28T10:15:00Z") => ({ status: "match", observed_at: at, evidence: { object_id: "post-1" } });

describe("verdict history", () => {
  it("gives the verdict after every record, in chain order", () => {
    const h = verdictHistory(
      [stage(1, T1, "intent", { target: "x" }, { tool: "x.post" }), stage(2, T1, "receipt", receipt), stage(3, T1, "canonical_read", absent)],
      [],
    );
    expect(h.map((e) => [e.seq, e.what, e.effective_outcome, e.changed])).toEqual([
      [1, "intent", "uncertain", false],
      [2, "receipt", "uncertain", false],
      [3, "canonical_read", "divergent", true],
    ]);
    expect(h.some((e) => e.changed_by_later_read)).toBe(false);
  });

  it("marks a later read that moves a divergent verdict to verified", () => {
    const h = verdictHistory([stage(1, T1, "receipt", receipt), stage(2, T1, "canonical_read", absent), stage(3, T2, "canonical_read", match())], []);
    expect(h[2]).toMatchObject({ effective_outcome: "verified", changed: true, changed_by_later_read: true });
  });

  it("marks a later read that verifies an operation left uncertain after its receipt", () => {
    const h = verdictHistory([stage(1, T1, "receipt", receipt), stage(2, T2, "canonical_read", match())], []);
    expect(h[1].changed_by_later_read).toBe(true);
  });

  it("does not mark a receipt and its read sent together, nor a read after an intent alone", () => {
    expect(verdictHistory([stage(1, T1, "receipt", receipt), stage(2, T1, "canonical_read", match())], []).some((e) => e.changed_by_later_read)).toBe(false);
    const h = verdictHistory([stage(1, T1, "intent", {}), stage(2, T2, "receipt", receipt), stage(3, T2, "canonical_read", match())], []);
    expect(h.some((e) => e.changed_by_later_read)).toBe(false);
  });

  it("marks only the read that moved it, not a second read agreeing later", () => {
    const h = verdictHistory(
      [stage(1, T1, "receipt", receipt), stage(2, T1, "canonical_read", absent), stage(3, T2, "canonical_read", match()), stage(4, T3, "canonical_read", match("2026-08-28T10:25:00Z"))],
      [],
    );
    expect(h.map((e) => e.changed_by_later_read)).toEqual([false, false, true, false]);
  });

  it("replays corrections in order: a read after a resolve does not move the effective outcome", () => {
    const h = verdictHistory(
      [stage(1, T1, "receipt", receipt), stage(2, T1, "canonical_read", absent), stage(4, T3, "canonical_read", match())],
      [{ id: "c1", action: "resolve", outcome: "not_applied", seq: 3, recorded_at: T2 }],
    );
    expect(h.map((e) => [e.what, e.outcome, e.effective_outcome, e.changed_by_later_read])).toEqual([
      ["receipt", "uncertain", "uncertain", false],
      ["canonical_read", "divergent", "divergent", false],
      ["resolve", "divergent", "not_applied", false],
      ["canonical_read", "verified", "not_applied", false],
    ]);
  });
});

describe("verdict history agrees with classifying every prefix in full", () => {
  it("for random sequences of stage records and corrections", () => {
    const times = ["2026-08-28T09:59:00Z", "2026-08-28T10:00:00Z", "2026-08-28T10:05:00Z", "2026-08-28T10:05:00.000001Z", "2026-08-28T10:10:00Z"];
    const readArb = fc.record({
      status: fc.constantFrom("match", "absent", "mismatch", "unavailable"),
      observed_at: fc.constantFrom(...times),
      evidence: fc.option(fc.record({ object_id: fc.constantFrom("a", ""), fingerprint: fc.constantFrom("sha256:1", "sha256:2") }), { nil: undefined }),
    });
    const stageArb = fc.oneof(
      fc.record({ stage: fc.constant("intent" as const), data: fc.record({ fingerprint: fc.constantFrom("sha256:1", "sha256:2"), params: fc.constantFrom({ a: 1 }, { a: 2 }) }) }),
      fc.record({ stage: fc.constant("receipt" as const), data: fc.record({ status: fc.constantFrom("accepted", "rejected"), observed_at: fc.constantFrom(...times), partial: fc.boolean(), params: fc.constantFrom({ a: 1 }, { a: 2 }) }) }),
      fc.record({ stage: fc.constant("canonical_read" as const), data: readArb }),
      fc.record({ stage: fc.constant("side_effects" as const), data: fc.constant([{ name: "x", status: "observed" }]) }),
      fc.record({ stage: fc.constant("correction" as const), data: fc.constantFrom<CorrectionFact["action"]>("resolve", "retract", "reopen") }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(stageArb, fc.nat(2)), { minLength: 1, maxLength: 30 }), (items) => {
        const stages: StoredStage[] = [];
        const corrections: (CorrectionFact & { seq: number; recorded_at: string })[] = [];
        let t = 0;
        items.forEach(([item, bump], i) => {
          t += bump;
          const recorded_at = new Date(Date.UTC(2026, 7, 28, 12, 0, t)).toISOString();
          if (item.stage === "correction") corrections.push({ id: `c${i}`, action: item.data, outcome: item.data === "resolve" ? "not_applied" : null, seq: i + 1, recorded_at });
          else stages.push(stage(i + 1, recorded_at, item.stage, item.data, i === 0 ? { tool: "x.post" } : null));
        });
        const history = verdictHistory(stages, corrections);
        for (const entry of history) {
          const prefix = stages.filter((s) => s.seq <= entry.seq);
          const state = deriveOperation("op", prefix, corrections.filter((c) => c.seq <= entry.seq));
          expect([entry.outcome, entry.reason, entry.effective_outcome]).toEqual([state.classification.outcome, state.classification.reason, state.effective_outcome]);
        }
      }),
      { numRuns: 500 },
    );
  });
});
