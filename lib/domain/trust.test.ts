import { describe, expect, it } from "vitest";
import {
  clockSkewSeconds,
  futureRefusal,
  MAX_READS_PER_OPERATION,
  ownershipRefusal,
  readCapRefusal,
  readsIn,
  scopeRefusal,
  type WriteRights,
} from "./trust";

const agent: WriteRights = { userId: "u-agent", mayIngest: true, mayVerify: false, isAdmin: false };
const verifier: WriteRights = { userId: "u-verifier", mayIngest: false, mayVerify: true, isAdmin: false };
const admin: WriteRights = { userId: "u-admin", mayIngest: true, mayVerify: false, isAdmin: true };
const read = (observed_at = "2026-08-28T10:05:00Z") => ({ status: "match", observed_at, evidence: { object_id: "x" } });

describe("verify scope", () => {
  it("refuses a canonical read from a sender without verify, and nothing else", () => {
    expect(scopeRefusal({ operation_id: "a", canonical_read: read() }, agent)?.code).toBe("verify_scope_required");
    expect(scopeRefusal({ operation_id: "a", canonical_read: [read(), read()] }, agent)?.code).toBe("verify_scope_required");
    expect(scopeRefusal({ operation_id: "a", receipt: { status: "accepted" }, side_effects: [] }, agent)).toBeNull();
    expect(scopeRefusal({ operation_id: "a", canonical_read: read() }, verifier)).toBeNull();
  });

  it("lets a verify-only token send reads and side effects, and nothing of the agent's own", () => {
    expect(scopeRefusal({ operation_id: "a", canonical_read: read(), side_effects: [] }, verifier)).toBeNull();
    expect(scopeRefusal({ operation_id: "a", intent: {} }, verifier)?.code).toBe("forbidden");
    expect(scopeRefusal({ operation_id: "a", canonical_read: read(), tool: "x" }, verifier)?.code).toBe("forbidden");
  });

  it("counts reads, single or listed", () => {
    expect(readsIn({ operation_id: "a" })).toBe(0);
    expect(readsIn({ canonical_read: read() })).toBe(1);
    expect(readsIn({ canonical_read: [read(), read(), read()] })).toBe(3);
  });
});

describe("operation ownership", () => {
  const receipt = { operation_id: "a", receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } };
  it("lets the creating user write anything", () => {
    expect(ownershipRefusal(receipt, "u-agent", agent)).toBeNull();
  });
  it("refuses another user's tokens", () => {
    expect(ownershipRefusal(receipt, "u-other", agent)?.code).toBe("not_operation_owner");
    expect(ownershipRefusal({ operation_id: "a", side_effects: [] }, "u-other", agent)?.code).toBe("not_operation_owner");
  });
  it("lets a verifier add reads and side effects to another's operation, nothing else", () => {
    expect(ownershipRefusal({ operation_id: "a", canonical_read: read(), side_effects: [] }, "u-agent", verifier)).toBeNull();
    expect(ownershipRefusal(receipt, "u-agent", verifier)?.code).toBe("not_operation_owner");
    expect(ownershipRefusal({ operation_id: "a", canonical_read: read(), claimed_outcome: "success" }, "u-agent", verifier)?.code).toBe(
      "not_operation_owner",
    );
  });
  it("lets an admin write anything, and nobody but admins and verifiers write to system operations", () => {
    expect(ownershipRefusal(receipt, "u-agent", admin)).toBeNull();
    expect(ownershipRefusal(receipt, null, admin)).toBeNull();
    expect(ownershipRefusal(receipt, null, { ...agent, userId: null })?.code).toBe("not_operation_owner");
    expect(ownershipRefusal({ operation_id: "a", canonical_read: read() }, null, verifier)).toBeNull();
  });
});

describe("observations dated in the future", () => {
  const now = Date.parse("2026-11-30T12:00:00Z");
  it("accepts up to the skew and refuses past it, naming the field", () => {
    expect(futureRefusal({ canonical_read: read("2026-11-30T12:05:00Z") }, now, 300)).toBeNull();
    const r = futureRefusal({ canonical_read: read("2026-11-30T12:05:00.000000001Z") }, now, 300);
    expect(r?.code).toBe("observed_in_future");
    expect(r?.details).toMatchObject({ fields: ["canonical_read.observed_at"] });
  });
  it("checks the receipt and every listed read, and honours offsets", () => {
    const r = futureRefusal(
      { receipt: { observed_at: "9999-01-01T00:00:00Z" }, canonical_read: [read(), read("2026-11-30T13:04:00+01:00"), read("2026-11-30T14:00:00Z")] },
      now,
      300,
    );
    expect(r?.details).toMatchObject({ fields: ["receipt.observed_at", "canonical_read[2].observed_at"] });
  });
  it("reads RECONCILE_MAX_CLOCK_SKEW", () => {
    expect(clockSkewSeconds(undefined)).toBe(300);
    expect(clockSkewSeconds("0")).toBe(0);
    expect(clockSkewSeconds("60")).toBe(60);
    expect(() => clockSkewSeconds("-1")).toThrow(/RECONCILE_MAX_CLOCK_SKEW/);
    expect(() => clockSkewSeconds("soon")).toThrow(/RECONCILE_MAX_CLOCK_SKEW/);
  });
});

describe("reads per operation", () => {
  it("allows exactly the cap in total", () => {
    expect(readCapRefusal(MAX_READS_PER_OPERATION - 2, 2)).toBeNull();
    expect(readCapRefusal(MAX_READS_PER_OPERATION - 2, 3)?.code).toBe("too_many_reads");
    expect(readCapRefusal(0, MAX_READS_PER_OPERATION + 1)?.code).toBe("too_many_reads");
  });
});
