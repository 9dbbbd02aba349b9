import { describe, expect, it } from "vitest";
import essay from "./fixtures/essay-x-post.json";
import { checkJsonShape } from "./json";
import { HeldStages, reconcileRecord, splitRecord } from "./stages";
import { compareInstants, normalizeInstant, toInstant } from "./time";
import { describeRefusal } from "./refusal";
import { operationRecordSchema } from "./wire";

const essayAsPrinted = {
  operation_id: "op-2026-08-29-001",
  intent: { target: "social account", effect: "publish exactly one post", fingerprint: "sha256:3f0a9c" },
  receipt: { status: "accepted", receipt_id: "gw-7731", observed_at: "2026-08-28T10:00:00Z" },
  canonical_read: { status: "absent", observed_at: "2026-08-28T10:05:00Z", evidence: "profile fetch shows no post" },
  side_effects: [{ name: "quota decrement", status: "observed" }],
  idempotency: { enforced: true, key: "op-2026-08-29-001" },
};

describe("wire schema", () => {
  it("accepts the essay's record as printed, and the fixture", () => {
    expect(operationRecordSchema.safeParse(essayAsPrinted).success).toBe(true);
    expect(operationRecordSchema.safeParse(essay.record).success).toBe(true);
  });
  it("accepts canonical_read as an array and evidence as an object", () => {
    const r = { ...essayAsPrinted, canonical_read: [{ status: "match", observed_at: "2026-08-28T10:05:00Z", evidence: { object_id: "1" } }] };
    expect(operationRecordSchema.safeParse(r).success).toBe(true);
  });
  it("keeps unknown fields (loose objects)", () => {
    const parsed = operationRecordSchema.parse({ ...essayAsPrinted, vendor_trace: { a: 1 }, receipt: { ...essayAsPrinted.receipt, x_extra: 2 } });
    expect((parsed as Record<string, unknown>).vendor_trace).toEqual({ a: 1 });
  });
  it.each([
    ["missing operation_id", { intent: {} }, "operation_id"],
    ["empty operation_id", { operation_id: "", intent: {} }, "operation_id"],
    ["operation_id with a slash", { operation_id: "a/b", intent: {} }, "operation_id"],
    ["no stage at all", { operation_id: "op-1" }, "(record)"],
    ["receipt status not in the enum", { operation_id: "op", receipt: { status: "ok", observed_at: "2026-08-28T10:00:00Z" } }, "receipt.status"],
    ["receipt without observed_at", { operation_id: "op", receipt: { status: "accepted" } }, "receipt.observed_at"],
    ["bad timestamp", { operation_id: "op", receipt: { status: "accepted", observed_at: "yesterday" } }, "receipt.observed_at"],
    ["impossible date", { operation_id: "op", receipt: { status: "accepted", observed_at: "2026-02-30T10:00:00Z" } }, "receipt.observed_at"],
    ["timestamp without zone", { operation_id: "op", receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00" } }, "receipt.observed_at"],
    ["read status not in the enum", { operation_id: "op", canonical_read: { status: "present", observed_at: "2026-08-28T10:00:00Z" } }, "canonical_read"],
    ["side effect status wrong", { operation_id: "op", side_effects: [{ name: "q", status: "yes" }] }, "side_effects[0].status"],
    ["partial not a boolean", { operation_id: "op", receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z", partial: "no" } }, "receipt.partial"],
  ])("rejects %s with a path", (_name, record, path) => {
    const r = operationRecordSchema.safeParse(record);
    expect(r.success).toBe(false);
    if (!r.success) expect(describeRefusal(r.error).details.map((i) => i.path).join(" ")).toContain(path);
  });
});

describe("JSON shape checks", () => {
  it("refuses deep nesting without recursion", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    expect(checkJsonShape(deep)?.message).toMatch(/deeper than/);
    expect(checkJsonShape({ a: [[{ b: 1 }]] })).toBeNull();
  });
  it("refuses __proto__ keys anywhere", () => {
    expect(checkJsonShape(JSON.parse('{"receipt":{"raw":{"__proto__":{"polluted":true}}}}'))?.path).toBe("receipt.raw.__proto__");
  });
});

describe("time", () => {
  it("compares with offsets and nanoseconds", () => {
    expect(compareInstants("2026-08-28T12:00:00+02:00", "2026-08-28T10:00:00Z")).toBe(0);
    expect(compareInstants("2026-08-28T10:00:00.000000002Z", "2026-08-28T10:00:00.000000001Z")).toBe(1);
    expect(toInstant("2026-08-28 10:00:00Z")).toBeNull();
    expect(normalizeInstant("2026-08-28T12:00:00.5+02:00")).toBe("2026-08-28T10:00:00.500Z");
  });
});

describe("stage records", () => {
  it("splits a record: one record per read, side effects as one, envelope on the first", () => {
    const drafts = splitRecord(essay.record);
    expect(drafts.map((d) => d.stage)).toEqual(["intent", "receipt", "canonical_read", "canonical_read", "side_effects"]);
    expect(drafts[0].envelope).toMatchObject({ trajectory_id: essay.record.trajectory_id, claimed_outcome: "success" });
    expect(drafts.slice(1).every((d) => d.envelope === null)).toBe(true);
    expect(drafts[1].observed_at).toBe("2026-08-28T14:02:11.000Z");
    expect(drafts[2].payload).toBe(essay.record.canonical_read[0]);
  });
  it("identical stages are duplicates; a different intent or receipt is a conflict", () => {
    const existing = new HeldStages(splitRecord(essay.record));
    expect(reconcileRecord(structuredClone(essay.record), existing)).toEqual({ kind: "ok", fresh: [], keys: [], duplicate: true });
    const other = { ...essay.record, intent: { ...essay.record.intent, effect: "publish two posts" } };
    expect(reconcileRecord(other, existing)).toMatchObject({ kind: "conflict", details: { stage: "intent" } });
    const otherReceipt = { operation_id: essay.record.operation_id, receipt: { ...essay.record.receipt, status: "rejected" } };
    expect(reconcileRecord(otherReceipt, existing)).toMatchObject({ kind: "conflict", details: { stage: "receipt" } });
  });
  it("a new read is appended; a different envelope value is a conflict", () => {
    const existing = new HeldStages(splitRecord(essay.record));
    const newRead = { operation_id: "x", canonical_read: { status: "match", observed_at: "2026-08-29T00:00:00Z", evidence: "seen" } };
    const r = reconcileRecord(newRead, existing);
    expect(r).toMatchObject({ kind: "ok", duplicate: false });
    if (r.kind === "ok") expect(r.fresh.map((f) => f.stage)).toEqual(["canonical_read"]);
    expect(reconcileRecord({ ...newRead, tool: { name: "other" } }, existing)).toMatchObject({ kind: "conflict", details: { fields: ["tool"] } });
  });
  it("a new envelope key with no new stage is refused, not silently dropped", () => {
    const existing = new HeldStages(splitRecord(essay.record).map((d, i) => ({ ...d, envelope: i === 0 ? { trajectory_id: "t" } : null })));
    const r = reconcileRecord({ operation_id: "x", receipt: essay.record.receipt, new_key: 1 }, existing);
    expect(r).toMatchObject({ kind: "conflict", details: { fields: ["new_key"] } });
  });
});

describe("normalizeInstant keeps range bounds sortable as text", () => {
  it.each([
    ["9999-12-31T23:59:59.999999999-23:59", "9999-12-31T23:59:59.999Z"],
    ["0000-01-01T00:00:00+01:00", "0000-01-01T00:00:00.000Z"],
    ["2026-08-28T14:02:11.123456+02:00", "2026-08-28T12:02:11.123Z"],
  ])("%s → %s", (input, output) => {
    expect(normalizeInstant(input)).toBe(output);
  });
});
