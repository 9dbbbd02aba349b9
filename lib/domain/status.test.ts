import { describe, expect, it } from "vitest";
import { REASONS } from "./outcomes";
import { actInEffect, statusLine } from "./status";

const act = { reviewer: "rita@example.com", recorded_at: "2026-11-30T09:05:00.000Z" };

describe("the status an operation's outcome and reason read as", () => {
  it("is the classification's reason while no correction is in effect", () => {
    expect(statusLine({ outcome: "divergent", reason: REASONS.absent, effective_outcome: "divergent", review: "none", act: null })).toEqual({ text: REASONS.absent, corrected: false });
  });

  it.each([
    ["not_applied", "divergent", REASONS.absent, "resolved as not applied by rita@example.com at 2026-11-30 09:05:00 UTC (was: divergent — the write was accepted but the canonical effect is absent)"],
    ["verified", "uncertain", REASONS.readUnavailable, "resolved as verified by rita@example.com at 2026-11-30 09:05:00 UTC (was: uncertain — the write was accepted, but canonical read-back is unavailable)"],
    ["compensated", "divergent", REASONS.mismatch, "resolved as compensated by rita@example.com at 2026-11-30 09:05:00 UTC (was: divergent — the write was accepted but canonical state conflicts with the intent)"],
  ] as const)("names a resolve as %s, who made it, when, and what it was", (review, outcome, reason, text) => {
    expect(statusLine({ outcome, reason, effective_outcome: review, review, act })).toEqual({ text, corrected: true });
  });

  it("says a resolve also withdrew the agent's success claim", () => {
    expect(statusLine({ outcome: "rejected", reason: REASONS.rejected, effective_outcome: "not_applied", review: "not_applied", act: { ...act, withdraw_claim: true } }).text).toBe(
      `resolved as not applied by rita@example.com at 2026-11-30 09:05:00 UTC, the agent's success claim withdrawn (was: rejected — ${REASONS.rejected})`,
    );
  });

  it("names a retracted success claim and the verdict it overrides", () => {
    expect(statusLine({ outcome: "verified", reason: REASONS.verified, effective_outcome: "divergent", review: "retracted", act })).toEqual({
      text: "success claim retracted by rita@example.com at 2026-11-30 09:05:00 UTC: now divergent (was: verified — canonical state matches the intended effect)",
      corrected: true,
    });
  });

  it("never contradicts itself: a corrected status never reads the reason alone", () => {
    for (const review of ["verified", "not_applied", "compensated", "retracted"] as const) {
      const s = statusLine({ outcome: "divergent", reason: REASONS.verified, effective_outcome: review === "retracted" ? "divergent" : review, review, act });
      expect(s.text.startsWith(REASONS.verified)).toBe(false);
      expect(s.text).toContain(`(was: divergent — ${REASONS.verified})`);
    }
  });

  it("leaves out who and when where they are not known (a list without the correction's record)", () => {
    expect(statusLine({ outcome: "divergent", reason: REASONS.absent, effective_outcome: "not_applied", review: "not_applied", act: null }).text).toBe(
      `resolved as not applied (was: divergent — ${REASONS.absent})`,
    );
  });
});

describe("the correction a status names", () => {
  const c = (action: string, by: string) => ({ action, reviewer: by });
  it("is the resolve in effect, the last retraction, or none", () => {
    expect(actInEffect("not_applied", [c("resolve", "a"), c("reopen", "b"), c("resolve", "c")])).toEqual(c("resolve", "c"));
    // Retracted, then resolved and reopened by others: the retraction is what is in effect.
    expect(actInEffect("retracted", [c("retract", "a"), c("resolve", "b"), c("reopen", "c")])).toEqual(c("retract", "a"));
    expect(actInEffect("none", [c("resolve", "a"), c("reopen", "b")])).toBeNull();
    expect(actInEffect("verified", [])).toBeNull();
  });
});
