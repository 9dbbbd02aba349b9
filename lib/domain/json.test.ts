import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkJsonShape, cut, findDuplicateKey, MAX_CONTAINERS, scanDuplicateKey, wellFormed } from "./json";

describe("findDuplicateKey", () => {
  it.each([
    ['{"a":1,"a":2}', "a"],
    ['{"receipt":{"status":"rejected","status":"accepted"}}', "receipt.status"],
    ['{"records":[{"x":1},{"operation_id":"a","operation_id":"b"}]}', "records[1].operation_id"],
    ['{"a\\u0062":1,"ab":2}', "ab"],
    ['{"q\\"":1,"q\\"":2}', 'q"'],
    ['[[1,2],{"k":[{"z":1,"z":1}]}]', "[1].k[0].z"],
  ])("finds the duplicate in %s", (text, path) => {
    expect(findDuplicateKey(text)).toBe(path);
  });

  it.each([
    '{"a":1,"b":{"a":1},"c":[{"a":1},{"a":2}]}',
    '{"a":"{\\"a\\":1,\\"a\\":2}","b":"\\\\","c":"\\\\\\""}',
    '"just a string"',
    "[1,2,3]",
    '{"":1,"a":{"":2}}',
  ])("finds none in %s", (text) => {
    expect(findDuplicateKey(text)).toBeNull();
  });

  it("agrees with a parse-and-compare oracle on random JSON", () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 4 }), (text) => {
        // JSON.stringify of a parsed value never repeats a key; so neither may the scanner find one.
        expect(findDuplicateKey(JSON.stringify(JSON.parse(text)))).toBeNull();
      }),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), fc.nat(), (obj, pick) => {
        const keys = Object.keys(obj);
        const dup = keys[pick % keys.length];
        const text = JSON.stringify(obj).slice(0, -1) + `,${JSON.stringify(dup)}:null}`;
        expect(findDuplicateKey(`{"outer":${text}}`)).toBe(`outer.${dup}`);
      }),
    );
  });
});

describe("checkJsonShape: text and numbers every database stores the same way", () => {
  it.each([
    [{ a: "x\ud800y" }, "a", /unpaired surrogate/],
    [{ a: ["ok", "\udfff"] }, "a[1]", /unpaired surrogate/],
    [{ "k\ud800": 1 }, "k\ud800", /key contains an unpaired surrogate/],
    [{ a: { b: "x\u0000" } }, "a.b", /NUL/],
    [{ a: JSON.parse("1e999") }, "a", /too large/],
    ["\u0000", "(record)", /NUL/],
  ])("refuses %j at %s", (value, path, message) => {
    const problem = checkJsonShape(value);
    expect(problem?.path).toBe(path);
    expect(problem?.message).toMatch(message);
  });

  it("accepts paired surrogates (emoji), other control characters and ordinary numbers", () => {
    expect(checkJsonShape({ a: "😀 \u0001 \t", b: 1.5e300, c: -0, "😀": [1, "é"] })).toBeNull();
  });
});

describe("scanDuplicateKey (the same scan in slices)", () => {
  it("pauses along a long text and finds what findDuplicateKey finds", () => {
    const keys = Array.from({ length: 2000 }, (_, i) => `"k${i}":${i}`);
    for (const text of [`{${keys.join(",")}}`, `{${keys.join(",")},"k1999":0}`, `[{"a":"\\\\"},{"b":1,"b":2}]`]) {
      const scan = scanDuplicateKey(text, 100);
      let pauses = 0;
      let step = scan.next();
      while (!step.done) {
        pauses++;
        step = scan.next();
      }
      expect(step.value).toBe(findDuplicateKey(text));
      expect(pauses).toBeGreaterThan(text.length / 200 - 1);
    }
  });
});

describe("containers per record", () => {
  it("refuses more than MAX_CONTAINERS arrays and objects, and takes exactly the limit", () => {
    const of = (n: number) => ({ params: { xs: Array.from({ length: n - 3 }, () => []) } });
    expect(checkJsonShape(of(MAX_CONTAINERS))).toBeNull();
    expect(checkJsonShape(of(MAX_CONTAINERS + 1))?.message).toMatch(/more than 100,000 arrays and objects/);
    expect(checkJsonShape({ keys: Object.fromEntries(Array.from({ length: 150_000 }, (_, i) => [`k${i}`, i])) })).toBeNull();
  });
});

describe("cutting and storing text", () => {
  it("cut never ends inside a surrogate pair, and leaves shorter text alone", () => {
    expect(cut(`${"a".repeat(299)}😀 after`, 300)).toBe("a".repeat(299));
    expect(cut(`${"a".repeat(298)}😀 after`, 300)).toBe(`${"a".repeat(298)}😀`);
    expect(cut("short", 300)).toBe("short");
    fc.assert(fc.property(fc.string({ unit: "grapheme" }), fc.nat(40), (text, n) => wellFormed(cut(text, n)) === cut(text, n)));
  });

  it("wellFormed puts U+FFFD for an unpaired surrogate and keeps pairs", () => {
    expect(wellFormed("a\ud83d")).toBe("a\ufffd");
    expect(wellFormed("\ude00b")).toBe("\ufffdb");
    expect(wellFormed("😀")).toBe("😀");
  });
});
