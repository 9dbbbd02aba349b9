import { describe, expect, it } from "vitest";
import { copyDocument, copyText } from "./pg-copy";

describe("COPY text format", () => {
  it("writes NULL as \\N, booleans as t/f, numbers and plain text as they are", () => {
    expect([null, undefined, true, false, 42, 1.5, "plain"].map(copyText)).toEqual(["\\N", "\\N", "t", "f", "42", "1.5", "plain"]);
  });

  it("escapes backslash, tab, newline and carriage return, and nothing else", () => {
    expect(copyText('a\\b\tc\nd\re "q" \'s\' ü')).toBe('a\\\\b\\tc\\nd\\re "q" \'s\' ü');
    expect(copyText("\\N")).toBe("\\\\N");
  });

  it("writes plain objects as JSON text, and refuses arrays, dates and buffers", () => {
    expect(copyText({ a: "x\ty" })).toBe('{"a":"x\\\\ty"}');
    expect(() => copyText([1])).toThrow(/not an array/);
    expect(() => copyText(new Date(0))).toThrow(/not a date/);
    expect(() => copyText(Buffer.from("x"))).toThrow(/not a buffer/);
  });

  it("joins columns with tabs and ends every row with a newline", () => {
    expect(copyDocument([[1, "a"], [null, "b\nc"]])).toBe("1\ta\n\\N\tb\\nc\n");
    expect(copyDocument([])).toBe("");
  });
});
