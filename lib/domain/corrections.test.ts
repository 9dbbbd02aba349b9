import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decideCorrection, isOverclaimed, needsReview, replayCorrections, type CorrectionFact, type EffectiveState } from "./corrections";
import { RETRY_DECISIONS } from "./outcomes";

const state = (outcome: EffectiveState["outcome"], more: Partial<EffectiveState> = {}): EffectiveState => ({ outcome, claim_withdrawn: false, resolved_from: null, withdrawn_by_resolve: false, ...more });
const evidence = { object_id: "post-123" };
const idem = { enforced: true, key: "k" };

type Row = [string, EffectiveState, string | null, Parameters<typeof decideCorrection>[0], string | RegExp];
// [name, current state, claimed, request, expected outcome after | refusal message]
const table: Row[] = [
  ["resolve uncertain as verified with evidence", state("uncertain"), null, { action: "resolve", outcome: "verified", evidence }, "verified"],
  ["resolve divergent as not_applied", state("divergent"), null, { action: "resolve", outcome: "not_applied" }, "not_applied"],
  ["resolve divergent as compensated", state("divergent"), null, { action: "resolve", outcome: "compensated" }, "compensated"],
  ["resolve as verified without evidence", state("divergent"), null, { action: "resolve", outcome: "verified" }, /needs evidence/],
  ["resolve as verified with empty evidence", state("divergent"), null, { action: "resolve", outcome: "verified", evidence: { object_id: " " } }, /needs evidence/],
  ["resolve with url evidence", state("divergent"), null, { action: "resolve", outcome: "verified", evidence: { url: "https://x.test/p/1" } }, "verified"],
  ["resolve without an outcome", state("divergent"), null, { action: "resolve" }, /say what it resolves to/],
  ["resolve a verified operation", state("verified"), null, { action: "resolve", outcome: "not_applied" }, /only an uncertain or divergent/],
  ["resolve a rejected operation nobody claimed", state("rejected"), null, { action: "resolve", outcome: "not_applied" }, /only an uncertain or divergent/],
  ["resolve a rejected operation whose claim was withdrawn", state("rejected", { claim_withdrawn: true }), "success", { action: "resolve", outcome: "not_applied" }, /only an uncertain or divergent/],
  ["resolve a rejected claimed success as not_applied, withdrawing the claim", state("rejected"), "success", { action: "resolve", outcome: "not_applied", withdraw_claim: true }, "not_applied"],
  ["resolve a rejected claimed success as not_applied", state("rejected"), "success", { action: "resolve", outcome: "not_applied" }, "not_applied"],
  ["resolve a rejected claimed success as verified with evidence", state("rejected"), "success", { action: "resolve", outcome: "verified", evidence }, "verified"],
  ["resolve a divergent claimed success as compensated, withdrawing the claim", state("divergent"), "success", { action: "resolve", outcome: "compensated", withdraw_claim: true }, "compensated"],
  ["withdraw a claim the agent never made", state("divergent"), null, { action: "resolve", outcome: "not_applied", withdraw_claim: true }, /claimed no success/],
  ["withdraw a claim of failure", state("divergent"), "failure", { action: "resolve", outcome: "not_applied", withdraw_claim: true }, /claimed no success/],
  ["withdraw a claim already withdrawn", state("divergent", { claim_withdrawn: true }), "success", { action: "resolve", outcome: "not_applied", withdraw_claim: true }, /already withdrawn/],
  ["withdraw the claim while resolving as verified", state("divergent"), "success", { action: "resolve", outcome: "verified", evidence, withdraw_claim: true }, /held: the claim was true/],
  ["withdraw the claim with a retraction", state("verified"), "success", { action: "retract", withdraw_claim: true }, /only with a resolve/],
  ["withdraw the claim with a reopen", state("not_applied", { resolved_from: "divergent" }), "success", { action: "reopen", withdraw_claim: true }, /only with a resolve/],
  ["resolve an already resolved operation", state("not_applied", { resolved_from: "divergent" }), null, { action: "resolve", outcome: "compensated" }, /only an uncertain or divergent/],
  ["retract a verified operation", state("verified"), null, { action: "retract" }, "divergent"],
  ["retract a reviewer's verified", state("verified", { resolved_from: "uncertain" }), null, { action: "retract" }, "divergent"],
  ["retract an overclaimed uncertain", state("uncertain"), "success", { action: "retract" }, "divergent"],
  ["retract an overclaimed rejected", state("rejected"), "success", { action: "retract" }, "divergent"],
  ["retract an uncertain nobody claimed", state("uncertain"), null, { action: "retract" }, /only a verified operation/],
  ["retract twice", state("divergent", { claim_withdrawn: true }), "success", { action: "retract" }, /only a verified operation/],
  ["retract a claimed success resolved as not_applied", state("not_applied", { resolved_from: "divergent" }), "success", { action: "retract" }, "divergent"],
  ["retract a claimed success resolved as compensated", state("compensated", { resolved_from: "uncertain" }), "success", { action: "retract" }, "divergent"],
  ["retract a not_applied nobody claimed", state("not_applied", { resolved_from: "divergent" }), null, { action: "retract" }, /only a verified operation/],
  ["retract with an outcome", state("verified"), null, { action: "retract", outcome: "not_applied" }, /sets no outcome/],
  ["reopen a resolved operation", state("not_applied", { resolved_from: "divergent" }), null, { action: "reopen" }, "divergent"],
  ["reopen an unresolved operation", state("divergent"), null, { action: "reopen" }, /only a resolved operation/],
  ["reopen a verified-by-rule operation", state("verified"), null, { action: "reopen" }, /only a resolved operation/],
];

describe("every allowed and refused transition", () => {
  it.each(table)("%s", (_name, current, claimed, request, expected) => {
    const d = decideCorrection(request, current, claimed, idem);
    if (typeof expected === "string") {
      expect(d).toMatchObject({ ok: true, outcome_seen: current.outcome, outcome_after: expected });
    } else {
      expect(d.ok).toBe(false);
      if (!d.ok) expect(d.message).toMatch(expected);
    }
  });

  it("the retry decision follows the effective outcome", () => {
    const retry = (r: Parameters<typeof decideCorrection>[0], s: EffectiveState) => {
      const d = decideCorrection(r, s, "success", idem);
      if (!d.ok) throw new Error(d.message);
      return d.retry_after;
    };
    expect(retry({ action: "resolve", outcome: "not_applied" }, state("divergent"))).toEqual({ automatic: false, safe_replay_available: false, decision: RETRY_DECISIONS.not_applied });
    expect(retry({ action: "resolve", outcome: "compensated" }, state("divergent")).decision).toBe(RETRY_DECISIONS.compensated);
    expect(retry({ action: "resolve", outcome: "verified", evidence }, state("uncertain")).decision).toBe(RETRY_DECISIONS.verified);
    expect(retry({ action: "retract" }, state("verified"))).toEqual({ automatic: false, safe_replay_available: true, decision: RETRY_DECISIONS.blocked });
  });
});

describe("replay", () => {
  const c = (action: CorrectionFact["action"], outcome: CorrectionFact["outcome"] = null): CorrectionFact => ({ id: action, action, outcome });
  it("resolve, reopen, resolve again, retract", () => {
    expect(replayCorrections("divergent", [c("resolve", "not_applied")]).outcome).toBe("not_applied");
    expect(replayCorrections("divergent", [c("resolve", "not_applied"), c("reopen")]).outcome).toBe("divergent");
    expect(replayCorrections("uncertain", [c("resolve", "verified"), c("retract")])).toEqual({ outcome: "divergent", claim_withdrawn: true, resolved_from: null, withdrawn_by_resolve: false });
    expect(replayCorrections("uncertain", [c("resolve", "verified"), c("reopen"), c("resolve", "compensated")]).outcome).toBe("compensated");
  });
  it("a retracted success stays counted as overclaimed, and needs review until resolved", () => {
    const before = replayCorrections("uncertain", []);
    expect(isOverclaimed("success", before)).toBe(true);
    const after = replayCorrections("uncertain", [c("retract")]);
    expect(isOverclaimed("success", after)).toBe(true);
    expect(needsReview("success", after)).toBe(true);
    const resolved = replayCorrections("uncertain", [c("retract"), c("resolve", "not_applied")]);
    expect(needsReview("success", resolved)).toBe(false);
    expect(isOverclaimed("success", resolved)).toBe(true);
  });
  it("one resolve sets the outcome and withdraws the claim; a reopen undoes both", () => {
    const withdraw: CorrectionFact = { id: "w", action: "resolve", outcome: "not_applied", withdraw_claim: true };
    const resolved = replayCorrections("rejected", [withdraw]);
    expect(resolved).toEqual({ outcome: "not_applied", claim_withdrawn: true, resolved_from: "rejected", withdrawn_by_resolve: true });
    expect(needsReview("success", resolved)).toBe(false);
    expect(isOverclaimed("success", resolved)).toBe(true);
    // The reopen says the resolve was premature, its finding about the claim included.
    const reopened = replayCorrections("rejected", [withdraw, c("reopen")]);
    expect(reopened).toEqual({ outcome: "rejected", claim_withdrawn: false, resolved_from: null, withdrawn_by_resolve: false });
    expect(needsReview("success", reopened)).toBe(true);
    // A retraction is not undone by reopening a later resolve.
    const retracted = replayCorrections("uncertain", [c("retract"), { id: "r", action: "resolve", outcome: "not_applied", withdraw_claim: true }, c("reopen")]);
    expect(retracted).toEqual({ outcome: "divergent", claim_withdrawn: true, resolved_from: null, withdrawn_by_resolve: false });
  });
  it("resolving a claimed success as not applied keeps it counted as overclaimed (the user was told success)", () => {
    const s = replayCorrections("rejected", [c("resolve", "not_applied")]);
    expect(needsReview("success", s)).toBe(false);
    expect(isOverclaimed("success", s)).toBe(true);
    // Compensated or verified: the effect held at some point, so the claim is not counted as false unless withdrawn.
    expect(isOverclaimed("success", replayCorrections("divergent", [c("resolve", "compensated")]))).toBe(false);
    expect(isOverclaimed("success", replayCorrections("divergent", [c("resolve", "verified")]))).toBe(false);
    expect(isOverclaimed("success", replayCorrections("divergent", [{ id: "x", action: "resolve", outcome: "compensated", withdraw_claim: true }]))).toBe(true);
  });
  it("needs review: uncertain, divergent, or rejected while the agent's success claim stands", () => {
    expect(needsReview("success", state("rejected"))).toBe(true);
    expect(needsReview(null, state("rejected"))).toBe(false);
    expect(needsReview("success", state("rejected", { claim_withdrawn: true }))).toBe(false);
    expect(needsReview(null, state("uncertain"))).toBe(true);
    expect(needsReview("success", state("not_applied", { resolved_from: "divergent" }))).toBe(false);
  });
  it("replaying the decisions reproduces each decision's outcome (property)", () => {
    const request = fc.oneof(
      fc.record({ action: fc.constant("resolve" as const), outcome: fc.constantFrom("verified" as const, "not_applied" as const, "compensated" as const), evidence: fc.constant(evidence), withdraw_claim: fc.boolean() }),
      fc.constant({ action: "retract" as const }),
      fc.constant({ action: "reopen" as const }),
    );
    fc.assert(
      fc.property(fc.constantFrom("rejected" as const, "uncertain" as const, "divergent" as const, "verified" as const), fc.constantFrom("success", null), fc.array(request, { maxLength: 12 }), (classified, claimed, requests) => {
        const made: CorrectionFact[] = [];
        let current = replayCorrections(classified, made);
        for (const r of requests) {
          const d = decideCorrection(r, current, claimed, idem);
          if (!d.ok) continue;
          made.push({ id: String(made.length), action: r.action, outcome: r.action === "resolve" ? r.outcome : null, withdraw_claim: r.action === "resolve" && r.withdraw_claim });
          current = replayCorrections(classified, made);
          expect(current.outcome).toBe(d.outcome_after);
          expect(current).toEqual(d.state_after);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("audit samples", () => {
  it("a verified audit sample can be confirmed as verified (with evidence), nothing else by resolve", () => {
    const ok = decideCorrection({ action: "resolve", outcome: "verified", evidence }, state("verified"), null, idem, { auditSample: true });
    expect(ok).toMatchObject({ ok: true, outcome_after: "verified", state_after: { resolved_from: "verified" } });
    expect(decideCorrection({ action: "resolve", outcome: "verified" }, state("verified"), null, idem, { auditSample: true })).toMatchObject({ ok: false, message: expect.stringMatching(/needs evidence/) });
    expect(decideCorrection({ action: "resolve", outcome: "not_applied" }, state("verified"), null, idem, { auditSample: true })).toMatchObject({ ok: false, message: expect.stringMatching(/confirmed as verified, or retracted/) });
    // Confirmed once: it is resolved now, and resolve is refused again.
    expect(decideCorrection({ action: "resolve", outcome: "verified", evidence }, state("verified", { resolved_from: "verified" }), null, idem, { auditSample: true }).ok).toBe(false);
    // Not a sample: as before.
    expect(decideCorrection({ action: "resolve", outcome: "verified", evidence }, state("verified"), null, idem).ok).toBe(false);
    // A sample may still be retracted.
    expect(decideCorrection({ action: "retract" }, state("verified"), null, idem, { auditSample: true })).toMatchObject({ ok: true, outcome_after: "divergent" });
  });
});
