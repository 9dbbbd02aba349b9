import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cellText, diffParams, previewJson } from "./preview";

const manyKeys = (n: number, flip: number[] = []) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${String(i).padStart(6, "0")}`, flip.includes(i) ? 1 : 0]));

describe("previewJson", () => {
  it("shows a small value whole, exactly as JSON.stringify would", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), (v) => {
        const small = JSON.stringify(v).length < 500 && !JSON.stringify(v).includes("…");
        fc.pre(small);
        expect(previewJson(v)).toEqual({ text: JSON.stringify(v, null, 2), truncated: false });
      }),
    );
  });

  it("keeps a key named __proto__ (a receipt may carry one)", () => {
    const v = JSON.parse('{"__proto__":{"x":1},"a":2}');
    expect(previewJson(v).text).toBe(JSON.stringify(v, null, 2));
  });

  it("cuts 100,000 keys to the first 100 and counts the rest", () => {
    const p = previewJson(manyKeys(100_000));
    expect(p.truncated).toBe(true);
    expect(p.text).toContain('"k000099": 0');
    expect(p.text).not.toContain("k000100");
    expect(p.text).toContain("… 99,900 more keys");
    expect(p.text.length).toBeLessThan(5_000);
  });

  it("cuts long strings, long arrays, wide-and-deep values and the whole text to their budgets", () => {
    expect(previewJson({ t: "x".repeat(1_000_000) }).text).toContain("… 998,000 more characters");
    expect(previewJson(Array.from({ length: 5000 }, (_, i) => i)).text).toContain("… 4,900 more items");
    // 100 × 100 × 100 values: the node budget stops the walk long before a million.
    const cube = Array.from({ length: 100 }, () => Array.from({ length: 100 }, () => Array.from({ length: 100 }, () => 1)));
    const p = previewJson(cube);
    expect(p.truncated).toBe(true);
    expect(p.text.length).toBeLessThan(25_000);
    const long = previewJson(Array.from({ length: 90 }, () => "y".repeat(1_500)));
    expect(long.text).toMatch(/… [\d,]+ more characters$/);
    expect(long.text.length).toBeLessThan(20_100);
  });
});

describe("diffParams", () => {
  it("marks differing, added and missing parameters; identical ones are not marked", () => {
    const d = diffParams({ a: 1, b: { x: [1, 2] }, c: "same", gone: true }, { a: 2, b: { x: [1, 2] }, c: "same", added: null });
    expect(d.rows).toEqual([
      { key: "a", intended: 1, passed: 2, differs: true },
      { key: "added", intended: undefined, passed: null, differs: true },
      { key: "gone", intended: true, passed: undefined, differs: true },
      { key: "b", intended: { x: [1, 2] }, passed: { x: [1, 2] }, differs: false },
      { key: "c", intended: "same", passed: "same", differs: false },
    ]);
    expect(d).toMatchObject({ total: 5, changed: 3, omitted: 0 });
  });

  it("without intended parameters nothing differs", () => {
    expect(diffParams(null, { a: 1 })).toEqual({ rows: [{ key: "a", intended: undefined, passed: 1, differs: false }], total: 1, changed: 0, omitted: 0 });
  });

  it("100,000 keys against 100,000: every change counted, differing rows shown first, at most 200 rows", () => {
    const d = diffParams(manyKeys(100_000), manyKeys(100_000, [7, 99_999]));
    expect(d.total).toBe(100_000);
    expect(d.changed).toBe(2);
    expect(d.rows).toHaveLength(200);
    expect(d.rows.slice(0, 2).map((r) => [r.key, r.differs])).toEqual([["k000007", true], ["k099999", true]]);
    expect(d.rows.slice(2).every((r) => !r.differs)).toBe(true);
    expect(d.omitted).toBe(99_800);
  });

  it("agrees with comparing every key's canonical JSON", () => {
    const obj = fc.dictionary(fc.constantFrom("a", "b", "c", "d"), fc.jsonValue({ maxDepth: 2 }));
    fc.assert(
      fc.property(obj, obj, (a, b) => {
        const d = diffParams(a, b);
        const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
        // Entries sorted by key alone: the default sort stringifies each [key, value] pair, which
        // throws for a value like {"toString": false} (a case fast-check found now and then).
        const byKey = ([x]: [string, unknown], [y]: [string, unknown]) => (x < y ? -1 : x > y ? 1 : 0);
        const canon = (v: unknown) => (v === undefined ? "∅" : JSON.stringify(v, (_k, x) => (x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(byKey)) : x)));
        expect(d.total).toBe(keys.size);
        for (const r of d.rows) expect(r.differs).toBe(canon(a[r.key]) !== canon(b[r.key]));
      }),
    );
  });
});

describe("cellText", () => {
  it("is short whatever the value", () => {
    expect(cellText(undefined)).toBe("—");
    expect(cellText({ a: 1 })).toBe('{"a":1}');
    expect(cellText("z".repeat(1_000_000)).length).toBeLessThanOrEqual(201);
    expect(cellText(manyKeys(100_000)).length).toBeLessThanOrEqual(201);
  });
});
