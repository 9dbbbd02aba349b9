import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cutoffOf, daySegments, effectiveRetention, parseRetentionDays, publishedThroughOf, sealablePrefix, type SealCandidate } from "./retention";

const rec = (seq: number, operation_id: string | null, day: string, time = "12:00:00.000Z"): SealCandidate => ({ seq, operation_id, recorded_at: `${day}T${time}` });

describe("cutoffOf", () => {
  it("is the start of the UTC day `days` days before today: whole days only", () => {
    expect(cutoffOf(new Date("2026-12-04T18:30:00.000Z"), 30)).toBe("2026-11-04T00:00:00.000Z");
    expect(cutoffOf(new Date("2026-12-04T00:00:00.000Z"), 1)).toBe("2026-12-03T00:00:00.000Z");
    // 0 days: everything before today.
    expect(cutoffOf(new Date("2026-12-04T23:59:59.999Z"), 0)).toBe("2026-12-04T00:00:00.000Z");
  });
});

describe("effectiveRetention", () => {
  it("is the project's own days when set, whatever the instance says; else the instance's; else none", () => {
    expect(effectiveRetention(30, 400)).toEqual({ days: 30, from: "project" });
    expect(effectiveRetention(500, null)).toEqual({ days: 500, from: "project" });
    expect(effectiveRetention(null, 400)).toEqual({ days: 400, from: "instance" });
    expect(effectiveRetention(null, 0)).toEqual({ days: 0, from: "instance" });
    expect(effectiveRetention(null, null)).toBeNull();
  });
});

describe("parseRetentionDays", () => {
  it("unset or empty keeps everything; a whole number of days otherwise", () => {
    expect(parseRetentionDays(undefined)).toBeNull();
    expect(parseRetentionDays("")).toBeNull();
    expect(parseRetentionDays("400")).toBe(400);
    expect(parseRetentionDays("0")).toBe(0);
    for (const bad of ["-1", "1.5", "abc", "1e3", "100000"]) expect(() => parseRetentionDays(bad), bad).toThrow(/RECONCILE_RETENTION_DAYS/);
  });
});

describe("sealablePrefix", () => {
  const cutoff = "2026-11-10T00:00:00.000Z";
  it("takes the run of old records of archivable operations from the chain's start", () => {
    const records = [rec(1, "a", "2026-11-01"), rec(2, "b", "2026-11-02"), rec(3, "a", "2026-11-03"), rec(5, "c", "2026-11-20")];
    expect(sealablePrefix(records, { kept: new Set(), cutoff })).toEqual({ first_seq: 1, last_seq: 3, count: 3 });
  });

  it("stops at the first record of an operation that is not archivable, even if later ones could go", () => {
    const records = [rec(1, "a", "2026-11-01"), rec(2, "review", "2026-11-02"), rec(3, "b", "2026-11-03")];
    expect(sealablePrefix(records, { kept: new Set(["review"]), cutoff })).toEqual({ first_seq: 1, last_seq: 1, count: 1 });
    expect(sealablePrefix([records[1], records[2]], { kept: new Set(["review"]), cutoff })).toBeNull();
  });

  it("stops at a record at or after the cut-off (whole days: midnight itself is too new)", () => {
    const records = [rec(1, "a", "2026-11-09", "23:59:59.999Z"), rec(2, "b", "2026-11-10", "00:00:00.000Z"), rec(3, "c", "2026-11-01")];
    expect(sealablePrefix(records, { kept: new Set(), cutoff })).toEqual({ first_seq: 1, last_seq: 1, count: 1 });
  });

  it("records of no operation (security events) go when they are old enough", () => {
    expect(sealablePrefix([rec(4, null, "2026-11-01"), rec(7, "a", "2026-11-02")], { kept: new Set(), cutoff })).toEqual({ first_seq: 4, last_seq: 7, count: 2 });
  });

  it("never goes past `through` (the last seq a published checkpoint covers)", () => {
    const records = [rec(1, "a", "2026-11-01"), rec(2, "b", "2026-11-02"), rec(3, "c", "2026-11-03")];
    expect(sealablePrefix(records, { kept: new Set(), cutoff, through: 2 })).toEqual({ first_seq: 1, last_seq: 2, count: 2 });
    expect(sealablePrefix(records, { kept: new Set(), cutoff, through: 0 })).toBeNull();
  });

  it("an empty chain has nothing to seal; records out of seq order are a caller's bug", () => {
    expect(sealablePrefix([], { kept: new Set(), cutoff })).toBeNull();
    expect(() => sealablePrefix([rec(2, "a", "2026-11-01"), rec(1, "b", "2026-11-01")], { kept: new Set(), cutoff })).toThrow(/seq order/);
  });

  it("property: the prefix is contiguous from the start, each record in it may go, and the next one may not", () => {
    const arb = fc.array(fc.record({ op: fc.constantFrom("a", "b", "c", "d", null), day: fc.integer({ min: 1, max: 20 }), gap: fc.integer({ min: 1, max: 3 }) }), { maxLength: 40 });
    fc.assert(
      fc.property(arb, fc.subarray(["a", "b", "c", "d"]), fc.option(fc.integer({ min: 0, max: 120 })), (rows, keptOps, through) => {
        let seq = 0;
        const records = rows.map((r) => rec((seq += r.gap), r.op, `2026-11-${String(r.day).padStart(2, "0")}`));
        const kept = new Set(keptOps);
        const p = sealablePrefix(records, { kept, cutoff, through: through ?? undefined });
        const mayGo = (r: SealCandidate) => r.recorded_at < cutoff && !(r.operation_id !== null && kept.has(r.operation_id)) && (through == null || r.seq <= through);
        const n = p ? p.count : 0;
        expect(records.slice(0, n).every(mayGo)).toBe(true);
        if (n < records.length) expect(mayGo(records[n])).toBe(false);
        if (p) expect([p.first_seq, p.last_seq]).toEqual([records[0].seq, records[n - 1].seq]);
      }),
    );
  });
});

describe("daySegments", () => {
  it("splits a prefix into contiguous runs of one UTC day each, in seq order", () => {
    const records = [rec(1, "a", "2026-11-01"), rec(2, "b", "2026-11-01", "23:00:00.000Z"), rec(4, "c", "2026-11-02"), rec(5, "c", "2026-11-04")];
    expect(daySegments(records, 3)).toEqual([
      { day: "2026-11-01", first_seq: 1, last_seq: 2, count: 2 },
      { day: "2026-11-02", first_seq: 4, last_seq: 4, count: 1 },
    ]);
    expect(daySegments(records, 0)).toEqual([]);
  });
});

describe("publishedThroughOf", () => {
  it("is the largest checkpoint below every one whose webhook announcement still waits", () => {
    expect(publishedThroughOf([], [])).toBe(0);
    expect(publishedThroughOf([10, 20, 30], [])).toBe(30);
    expect(publishedThroughOf([10, 20, 30], [30])).toBe(20);
    expect(publishedThroughOf([10, 20, 30], [20, 30])).toBe(10);
    expect(publishedThroughOf([10, 20, 30], [10])).toBe(0);
  });
});
