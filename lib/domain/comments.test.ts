import { describe, expect, it } from "vitest";
import { commentRequestSchema, MAX_COMMENT_LENGTH } from "./comments";

describe("a note's request", () => {
  it("takes trimmed text up to the limit", () => {
    expect(commentRequestSchema.parse({ text: "  handed to Sam: the bank will call back  " })).toEqual({ text: "handed to Sam: the bank will call back" });
    expect(commentRequestSchema.safeParse({ text: "x".repeat(MAX_COMMENT_LENGTH) }).success).toBe(true);
  });
  it.each([
    ["empty", { text: "" }, /write the note/],
    ["blank", { text: " \n\t " }, /write the note/],
    ["too long", { text: "x".repeat(MAX_COMMENT_LENGTH + 1) }, /at most 4000/],
    ["a NUL", { text: "a\u0000b" }, /NUL/],
    ["an unpaired surrogate", { text: "a\ud800b" }, /surrogate/],
    ["not text", { text: 42 }, /string/],
    ["missing", {}, /text/],
    ["an unknown key", { text: "ok", author: "someone else" }, /author/],
  ])("refuses %s", (_name, body, message) => {
    const r = commentRequestSchema.safeParse(body);
    expect(r.success).toBe(false);
    if (!r.success) expect(JSON.stringify(r.error.issues)).toMatch(message);
  });
});
