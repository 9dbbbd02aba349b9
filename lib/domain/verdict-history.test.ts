import { describe, expect, it } from "vitest";
import type { StoredStage } from "./operation";
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
