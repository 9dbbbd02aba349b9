import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseRecordsInPieces, splitRecordsArray } from "./json-split";

const whole = async (text: string) => parseRecordsInPieces(text, async () => {});

describe("a batch body parsed record by record", () => {
  const bodies = [
    `{"records":[{"a":1},{"b":[1,2,{"c":"x"}]},3,"s",null,[]]}`,
    ` { "x" : "records" , "records" : [ { "q" : "] , [ \\" }" } , {"k":"\\\\"} ] , "y": {"records":[9]} } `,
    `{"records":[]}`,
    `{"records":[ ]}`,
    `{"records":[{"__proto__":1,"records":[1,2]}],"z":0}`,
    `{"records":[{"t":"\\u005d\\u002c\\\\\\""}]}`,
    `{"a":{"records":[1,2]},"records":[{"n":-0.5e3}]}`,
  ];
  it.each(bodies)("equals JSON.parse: %s", async (text) => {
    expect(splitRecordsArray(text)).not.toBeNull();
    expect(await whole(text)).toEqual(JSON.parse(text));
  });

  it("keeps a __proto__ key as an own key, as JSON.parse does", async () => {
    const v = (await whole(`{"records":[{"__proto__":{"x":1}}]}`)) as { records: Record<string, unknown>[] };
    expect(Object.hasOwn(v.records[0], "__proto__")).toBe(true);
  });

  it("lets others run between records", async () => {
    const turns: number[] = [];
    let parsed = 0;
    const text = JSON.stringify({ records: Array.from({ length: 5 }, (_, i) => ({ i })) });
    await parseRecordsInPieces(text, async () => void turns.push(++parsed));
    expect(turns.length).toBeGreaterThanOrEqual(4);
  });

  it.each([
    ["no records key", `{"x":[1,2]}`],
    ["not an object", `[{"records":[1]}]`],
    ["records not an array", `{"records":{"a":1}}`],
    ["an escaped key", `{"rec\\u006frds":[1]}`],
    ["more elements than pieces", JSON.stringify({ records: Array.from({ length: 1001 }, (_, i) => i) })],
  ])("has no pieces when there is nothing to split (%s), and parses whole", async (_n, text) => {
    expect(splitRecordsArray(text)).toBeNull();
    expect(await whole(text)).toEqual(JSON.parse(text));
  });

  it.each([
    `{"records":[{"a":1},]}`,
    `{"records":[,{"a":1}]}`,
    `{"records":[{"a":1} {"b":2}]}`,
    `{"records":[{"a":1}],}`,
    `{"records":[{"a":"unterminated]}`,
    `{"records":[{"a":1}]`,
    `{"records":[{"a":1}]}x`,
    `{"records":[{"a":1}}]}`,
    `{"records":[01]}`,
  ])("throws as JSON.parse throws on invalid text: %s", async (text) => {
    expect(() => JSON.parse(text)).toThrow();
    await expect(whole(text)).rejects.toThrow(SyntaxError);
  });

  it("equals JSON.parse on any batch, and throws where it throws on any mangled one", async () => {
    const text = fc.string({ unit: fc.constantFrom("a", '"', "\\", "[", "]", "{", "}", ",", ":", " ", "é", "\n") });
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: "small" }, fc.integer(), text, fc.constant(null), fc.array(tie("v"), { maxLength: 3 }), fc.dictionary(text, tie("v"), { maxKeys: 3 })),
    })).v;
    const body = fc.tuple(fc.array(value, { maxLength: 5 }), fc.dictionary(text, value, { maxKeys: 2 }), fc.constantFrom("", " ", "\n  ")).map(([records, extra, ws]) => {
      const json = JSON.stringify({ ...extra, records });
      return ws ? json.replaceAll(",", `,${ws}`).replaceAll("[", `[${ws}`) : json;
    });
    await fc.assert(
      fc.asyncProperty(body, fc.nat(), fc.constantFrom("cut", "drop", "dup", "none"), async (t, at, how) => {
        const k = t.length ? at % t.length : 0;
        const mangled = how === "cut" ? t.slice(0, k) : how === "drop" ? t.slice(0, k) + t.slice(k + 1) : how === "dup" ? t.slice(0, k) + t[k] + t.slice(k) : t;
        let expected: { ok: unknown } | { error: true };
        try {
          expected = { ok: JSON.parse(mangled) };
        } catch {
          expected = { error: true };
        }
        if ("ok" in expected) expect(await whole(mangled)).toEqual(expected.ok);
        else await expect(whole(mangled)).rejects.toThrow(SyntaxError);
      }),
      { numRuns: 2000 },
    );
  });
});
