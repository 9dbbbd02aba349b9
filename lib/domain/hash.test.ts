import fc from "fast-check";
import { describe, expect, it } from "vitest";
import canonicalize from "canonicalize";
import { canonicalJson, chainHash, GENESIS_HASH, jsonEqual, sha256Hex, verifyChain, type ChainRecord } from "./hash";

function chain(n: number): ChainRecord[] {
  const out: ChainRecord[] = [];
  let prev = GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const fields = { seq, kind: "stage" as const, operation_id: `op-${seq}`, recorded_at: "2026-08-28T10:00:00.000Z", actor: null, payload: { n: seq }, prev_hash: prev };
    const hash = chainHash(fields);
    out.push({ ...fields, hash });
    prev = hash;
  }
  return out;
}

describe("canonical hashing", () => {
  it("is RFC 8785: key order and number forms do not matter", () => {
    expect(canonicalJson({ b: 1, a: [1e0, "x"] })).toBe('{"a":[1,"x"],"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });
  it("writes a scalar exactly as the RFC 8785 library does, and refuses what it refuses", () => {
    const library = (v: unknown) => (canonicalize as unknown as (v: unknown) => string)(v);
    const scalars: unknown[] = [null, "", "plain", 'q"uote\\ back\n\t\u0001 \u2028 é 😀', 0, -0, 1, -1, 0.1, 1e21, 1e-7, 5e-324, 2 ** 53 + 2, 123456789.125];
    for (const v of scalars) expect(canonicalJson(v)).toBe(library(v));
    fc.assert(fc.property(fc.oneof(fc.string({ unit: "grapheme" }), fc.double({ noNaN: true, noDefaultInfinity: true })), (v) => canonicalJson(v) === library(v)));
    for (const bad of ["\ud800", "a\udc00b", Number.NaN, Infinity, -Infinity]) expect(() => canonicalJson(bad)).toThrow();
  });
  it("verifies an intact chain and names the first bad seq", () => {
    const c = chain(10);
    expect(verifyChain(c)).toMatchObject({ ok: true, count: 10 });
    const edited = c.map((r) => (r.seq === 4 ? { ...r, payload: { n: 40 } } : r));
    expect(verifyChain(edited)).toMatchObject({ ok: false, badSeq: 4 });
    const deleted = c.filter((r) => r.seq !== 6);
    expect(verifyChain(deleted)).toMatchObject({ ok: false, badSeq: 6 });
    const swapped = [...c];
    [swapped[2], swapped[3]] = [swapped[3], swapped[2]];
    expect(verifyChain(swapped)).toMatchObject({ ok: false, badSeq: 3 });
  });
  it("catches a record re-hashed after an edit (its successor no longer links)", () => {
    const c = chain(5);
    const forged = { ...c[1], payload: { n: 99 } };
    forged.hash = chainHash(forged);
    expect(verifyChain([c[0], forged, ...c.slice(2)])).toMatchObject({ ok: false, badSeq: 3 });
  });
  it("a record whose content cannot be canonicalised (a number past a double, e.g. 1e999 in a file) is a bad record, not a crash", () => {
    const c = chain(4);
    // JSON.parse turns 1e999 into Infinity, which has no canonical JSON form.
    const edited = c.map((r) => (r.seq === 3 ? { ...r, payload: JSON.parse('{"n":1e999}') } : r));
    expect(verifyChain(edited)).toMatchObject({ ok: false, badSeq: 3, problem: "hash does not match the record's content" });
    const nan = c.map((r) => (r.seq === 2 ? { ...r, payload: { n: Number.NaN } } : r));
    expect(verifyChain(nan)).toMatchObject({ ok: false, badSeq: 2 });
  });
});

describe("jsonEqual walks both values once and agrees with comparing canonical JSON", () => {
  const shuffled = (v: unknown, flip: boolean): unknown =>
    Array.isArray(v)
      ? v.map((x) => shuffled(x, !flip))
      : v && typeof v === "object"
        ? Object.fromEntries((flip ? Object.entries(v).reverse() : Object.entries(v)).map(([k, x]) => [k, shuffled(x, !flip)]))
        : v;
  it("on random pairs, and on a value against a reordered copy", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(jsonEqual(a, b)).toBe(canonicalJson(a) === canonicalJson(b));
        expect(jsonEqual(a, shuffled(a, true))).toBe(true);
      }),
      { numRuns: 1000 },
    );
    expect(jsonEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: undefined })).toBe(true);
    expect(jsonEqual(0, -0)).toBe(true);
    expect(jsonEqual([1], { 0: 1 })).toBe(false);
  });
});

describe("sha256Hex", () => {
  it("is SHA-256 of the text's UTF-8 bytes, as sha256sum prints it", () => {
    // Vectors from `printf '…' | sha256sum`, not from this code: an exported chain is checked by
    // tools that hash the UTF-8 bytes.
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256Hex('{"a":"é🙂"}')).toBe("db3100d3b35e8507892a20e67d948e72daabdb8fb2707ab83ede59398a36f3fe");
  });
});
