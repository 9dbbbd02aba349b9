import { describe, expect, it } from "vitest";
import {
  approvalRequestOf,
  approvalRequestSchema,
  classifyWithApproval,
  deriveApproval,
  MAX_APPROVAL_WAIT_MS,
  mayDecide,
  mayUse,
  paramsDigest,
  type ApprovalFact,
} from "./approval";
import { classify } from "./classify";

const request = { status: "pending" as const, expires_at: "2026-12-04T10:10:00Z", rule: "/amount > 100", rule_version: "v1" };
const at = "2026-12-04T10:00:00.000Z";
const params = { amount: 250, currency: "EUR" };
const digest = paramsDigest(params);
const decided = (decision: "approve" | "deny", seq = 2, actor = "rev@x"): ApprovalFact => ({
  action: "decided",
  decision,
  reason: decision === "approve" ? "known customer" : "too large",
  params_digest: digest,
  rule_version: "v1",
  intent_seq: 1,
  seq,
  recorded_at: "2026-12-04T10:01:00.000Z",
  actor,
});
const used = (seq: number, actor = "gw@x"): ApprovalFact => ({ action: "used", params_digest: digest, seq, recorded_at: "2026-12-04T10:02:00.000Z", actor });

describe("approval requests", () => {
  it("accepts exactly the pending shape and names what is wrong otherwise", () => {
    expect(approvalRequestSchema.safeParse(request).success).toBe(true);
    expect(approvalRequestSchema.safeParse({ ...request, status: "approved" }).success).toBe(false);
    expect(approvalRequestSchema.safeParse({ ...request, expires_at: "tomorrow" }).success).toBe(false);
    expect(approvalRequestSchema.safeParse({ ...request, extra: 1 }).success).toBe(false);
    expect(approvalRequestOf({ approval: request })).toEqual(request);
    expect(approvalRequestOf({ approval: "yes" })).toBeNull();
    expect(approvalRequestOf({})).toBeNull();
  });

  it("digests arguments canonically: key order does not matter, values do", () => {
    expect(paramsDigest({ currency: "EUR", amount: 250 })).toBe(digest);
    expect(paramsDigest({ amount: 251, currency: "EUR" })).not.toBe(digest);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe("deriveApproval", () => {
  it("is pending until the first decision or expiry, which settles it", () => {
    expect(deriveApproval(request, at, params, []).status).toBe("pending");
    const approved = deriveApproval(request, at, params, [decided("approve"), decided("deny", 3)]);
    expect(approved).toMatchObject({ status: "approved", decided_by: "rev@x", reason: "known customer", used_at: null });
    const expired = deriveApproval(request, at, params, [{ action: "expired", expires_at: request.expires_at, seq: 2, recorded_at: "2026-12-04T10:10:01.000Z", actor: null }, decided("approve", 3)]);
    expect(expired.status).toBe("expired");
    expect(deriveApproval(request, at, params, [decided("deny")])).toMatchObject({ status: "denied", reason: "too large" });
  });

  it("counts one use, and only of an approved call", () => {
    expect(deriveApproval(request, at, params, [used(2)]).used_at).toBeNull();
    const s = deriveApproval(request, at, params, [decided("approve"), used(3, "gw-a"), used(4, "gw-b")]);
    expect(s.used_by).toBe("gw-a");
  });

  it("never waits longer than the cap, whatever the request asks", () => {
    const far = deriveApproval({ ...request, expires_at: "2099-01-01T00:00:00Z" }, at, params, []);
    expect(Date.parse(far.expires_at) - Date.parse(at)).toBe(MAX_APPROVAL_WAIT_MS);
    expect(deriveApproval({ ...request, expires_at: "2026-12-04T11:10:00+01:00" }, at, params, []).expires_at).toBe("2026-12-04T10:10:00.000Z");
  });
});

describe("classifyWithApproval", () => {
  const intentOnly = classify({ stages: [{ stage: "intent", seq: 1, payload: { params } }] });
  it("holds a waiting call as uncertain, a denied or expired one as rejected, and leaves an approved one to its stages", () => {
    const pending = deriveApproval(request, at, params, []);
    expect(classifyWithApproval(intentOnly, pending, false)).toMatchObject({ outcome: "uncertain", reason: "waiting for approval", failure_category: null });
    const denied = deriveApproval(request, at, params, [decided("deny")]);
    expect(classifyWithApproval(intentOnly, denied, false)).toMatchObject({ outcome: "rejected", reason: "denied by rev@x: too large", retry: { decision: "a new operation may be justified by new evidence" } });
    const expired = deriveApproval(request, at, params, [{ action: "expired", expires_at: request.expires_at, seq: 2, recorded_at: at, actor: null }]);
    expect(classifyWithApproval(intentOnly, expired, false).outcome).toBe("rejected");
    expect(classifyWithApproval(intentOnly, deriveApproval(request, at, params, [decided("approve")]), false)).toEqual(intentOnly);
  });
  it("lets the stages decide once a receipt exists", () => {
    const withReceipt = classify({ stages: [{ stage: "intent", seq: 1, payload: { params } }, { stage: "receipt", seq: 3, payload: { status: "accepted", observed_at: at } }] });
    expect(classifyWithApproval(withReceipt, deriveApproval(request, at, params, []), true)).toEqual(withReceipt);
  });
});

describe("mayDecide and mayUse", () => {
  const pending = deriveApproval(request, at, params, []);
  const now = Date.parse(at) + 60_000;
  it("refuses the caller's own account, a second decision and a late one", () => {
    expect(mayDecide(pending, { reviewer: "rev@x", owner: "agent@x", now })).toEqual({ ok: true });
    expect(mayDecide(pending, { reviewer: "agent@x", owner: "agent@x", now })).toMatchObject({ ok: false, code: "forbidden" });
    expect(mayDecide(deriveApproval(request, at, params, [decided("deny")]), { reviewer: "r2@x", owner: "agent@x", now })).toMatchObject({ ok: false, code: "conflict" });
    expect(mayDecide(pending, { reviewer: "rev@x", owner: "agent@x", now: Date.parse(request.expires_at) })).toMatchObject({ ok: false, code: "conflict" });
  });
  it("forwards an approved call once, and only with the approved arguments", () => {
    const approved = deriveApproval(request, at, params, [decided("approve")]);
    expect(mayUse(approved, { digest, now })).toEqual({ ok: true });
    expect(mayUse(approved, { digest, ruleVersion: "v1", now })).toEqual({ ok: true });
    expect(mayUse(approved, { digest: paramsDigest({ amount: 9999, currency: "EUR" }), now })).toMatchObject({ ok: false });
    expect(mayUse(approved, { digest, ruleVersion: "v2", now })).toMatchObject({ ok: false, message: expect.stringContaining("rule that held the call changed") });
    expect(mayUse(deriveApproval(request, at, params, [decided("approve"), used(3)]), { digest, now })).toMatchObject({ ok: false });
    expect(mayUse(pending, { digest, now })).toMatchObject({ ok: false });
    // Usable until the request's expiry (10:10), or five minutes after the decision (10:01) if later.
    expect(mayUse(approved, { digest, now: Date.parse("2026-12-04T10:09:59Z") })).toEqual({ ok: true });
    expect(mayUse(approved, { digest, now: Date.parse("2026-12-04T10:10:01Z") })).toMatchObject({ ok: false, message: expect.stringContaining("ran out") });
  });
});
