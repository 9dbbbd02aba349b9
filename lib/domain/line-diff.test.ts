import { describe, expect, it } from "vitest";
import { lineDiff, textChanges } from "./line-diff";

const render = (d: ReturnType<typeof lineDiff>) => d.map((l) => `${l.kind === "same" ? " " : l.kind === "removed" ? "-" : "+"}${l.text}`).join("\n");

describe("a line diff", () => {
  it("keeps the common lines and marks the changed ones, removed before added", () => {
    expect(render(lineDiff("a\nb\nc\nd", "a\nB\nc\nd\ne"))).toBe(" a\n-b\n+B\n c\n d\n+e");
  });

  it("finds the longest common run in the middle, not just the head and tail", () => {
    expect(render(lineDiff("x\n1\n2\n3\ny", "z\n1\n2\n3\nw"))).toBe("-x\n+z\n 1\n 2\n 3\n-y\n+w");
  });

  it("says an identical text is unchanged, and a text from nothing is all added", () => {
    expect(lineDiff("same\ntext", "same\ntext").every((l) => l.kind === "same")).toBe(true);
    expect(render(lineDiff("", "one\ntwo"))).toBe("-\n+one\n+two");
  });

  it("treats CRLF as LF", () => {
    expect(render(lineDiff("a\r\nb", "a\nb"))).toBe(" a\n b");
  });

  it("shows a middle past its budget as removed then added, in linear time", () => {
    const a = Array.from({ length: 1000 }, (_, i) => `a${i}`).join("\n");
    const b = Array.from({ length: 1000 }, (_, i) => `b${i}`).join("\n");
    const t = performance.now();
    const d = lineDiff(`head\n${a}\ntail`, `head\n${b}\ntail`);
    expect(performance.now() - t).toBeLessThan(500);
    expect(d.filter((l) => l.kind === "removed")).toHaveLength(1000);
    expect(d.filter((l) => l.kind === "added")).toHaveLength(1000);
    expect(d[0]).toEqual({ kind: "same", text: "head" });
    expect(d.at(-1)).toEqual({ kind: "same", text: "tail" });
    expect(d.findIndex((l) => l.kind === "added")).toBeGreaterThan(d.findLastIndex((l) => l.kind === "removed"));
  });
});

describe("the text changes a call's arguments describe", () => {
  it("reads edit_file's edits and top-level old/new pairs", () => {
    expect(textChanges({ path: "a.md", edits: [{ oldText: "x", newText: "y" }, { nope: 1 }, { oldText: "p", newText: "q" }] })).toEqual([
      { label: "edits[0]", before: "x", after: "y" },
      { label: "edits[2]", before: "p", after: "q" },
    ]);
    expect(textChanges({ file_path: "a", old_string: "1", new_string: "2" })).toEqual([{ label: "change", before: "1", after: "2" }]);
    expect(textChanges({ old: "1", new: "2" })).toEqual([{ label: "change", before: "1", after: "2" }]);
  });

  it("finds none where the arguments carry no pair of texts", () => {
    for (const p of [null, [], { content: "x" }, { old: 1, new: 2 }, { old: "x" }, { edits: "x" }]) expect(textChanges(p)).toEqual([]);
  });
});
