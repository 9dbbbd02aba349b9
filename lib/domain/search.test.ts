import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { foldedWords, ftsMatch, highlightParts, MAX_WORD, parseSearch, SEARCH_DOCUMENT_MAX, searchDocument, snippetOf, tsQuery, tsVector, type SearchSource } from "./search";

const refund: SearchSource = {
  operation_id: "op-billing-7-refund",
  tool: "payments.refund",
  target: "order 5531",
  effect: "refund 20.00 EUR",
  agent: "billing-agent",
  trajectory_id: "run-billing-7",
  receipt_id: "rcpt-77",
  receipt_tool: "payments.charge",
  reason: "the write was accepted but canonical state conflicts with the intent",
  correction_reasons: ["Checked with the bank: charged twice"],
  params: { order: "5531", amount: 20, lines: [{ sku: "Café crème" }] },
  receipt_params: { order: "5531", amount: 20 },
  evidence: [{ object_id: "ch_5531", fingerprint: "sha256:abc" }, "a plain evidence string"],
  side_effects: ["ledger entry written"],
};

describe("the search document: what an operator reads of an operation", () => {
  it("puts identity fields in the head and the rest in the body, as label: value lines", () => {
    const d = searchDocument(refund);
    expect(d.head.split("\n")).toEqual([
      "tool: payments.refund",
      "target: order 5531",
      "effect: refund 20.00 EUR",
      "agent: billing-agent",
      "trajectory: run-billing-7",
      "operation: op-billing-7-refund",
      "receipt: rcpt-77",
    ]);
    expect(d.body.split("\n")).toEqual([
      "reason: the write was accepted but canonical state conflicts with the intent",
      "correction: Checked with the bank: charged twice",
      "receipt tool: payments.charge",
      "params.order: 5531",
      "params.amount: 20",
      "params.lines.sku: Café crème",
      "evidence.object_id: ch_5531",
      "evidence.fingerprint: sha256:abc",
      "evidence: a plain evidence string",
      "side effect: ledger entry written",
    ]);
  });

  it("leaves out missing fields and repeats no line (receipt params equal to the intent's)", () => {
    const d = searchDocument({ operation_id: "op-1", params: { a: "x" }, receipt_params: { a: "x", b: "y" } });
    expect(d.head).toBe("operation: op-1");
    expect(d.body).toBe("params.a: x\nreceipt.params.b: y");
  });

  it("flattens whitespace so that each value stays on its line", () => {
    expect(searchDocument({ operation_id: "op-1", target: "a\nb\t c" }).head).toContain("target: a b c");
  });

  it("caps the document and walks huge or deep values without recursion", () => {
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, `value ${i}`]));
    let deep: unknown = "bottom";
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    const t0 = performance.now();
    const d = searchDocument({ operation_id: "op-1", params: wide, receipt_params: deep as Record<string, unknown>, evidence: ["x".repeat(10_000)] });
    expect(performance.now() - t0).toBeLessThan(500);
    expect(d.head.length + d.body.length).toBeLessThanOrEqual(SEARCH_DOCUMENT_MAX);
    expect(d.body).toContain("params.k0: value 0");
  });
});

describe("a person's query as a safe full-text query", () => {
  it("splits on whitespace into phrases of word tokens, case and accents folded", () => {
    expect(parseSearch("Refund  ORDER ch_5531 Crème")).toEqual({ phrases: [["refund"], ["order"], ["ch", "5531"], ["creme"]], prefix: false });
  });

  it("has no terms when the query has no letters or digits", () => {
    for (const q of ['"', "*", "-", ":", "()", "^", "''", "   ", "!@#$%^&*()_+-=[]{};':\",./<>?`~\\|"]) expect(parseSearch(q)).toBeNull();
  });

  it("treats the last word as a prefix only when asked with a trailing * and it has at least three characters", () => {
    expect(parseSearch("refun*")?.prefix).toBe(true);
    expect(parseSearch("order refun**")?.prefix).toBe(true);
    expect(parseSearch("refun")?.prefix).toBe(false);
    expect(parseSearch("re*")?.prefix).toBe(false);
    expect(parseSearch("refund* 55")?.prefix).toBe(false);
    expect(parseSearch("refund *")?.prefix).toBe(false);
  });

  it("quotes every term for FTS5, so that FTS syntax is only ever text", () => {
    expect(ftsMatch(parseSearch("refund 5531")!)).toBe('"refund" "5531"');
    expect(ftsMatch(parseSearch("refund 553*")!)).toBe('"refund" "553"*');
    expect(ftsMatch(parseSearch('x" OR NEAR(a b) -c * col:d')!)).toBe('"x" "or" "near a" "b" "c" "col d"');
    expect(ftsMatch(parseSearch("ch_5531")!)).toBe('"ch 5531"');
  });

  it("builds a PostgreSQL tsquery of quoted lexemes: phrases with <->, terms with &", () => {
    expect(tsQuery(parseSearch("refund ch_5531")!)).toBe("'refund' & 'ch' <-> '5531'");
    expect(tsQuery(parseSearch("refund ch_553*")!)).toBe("'refund' & 'ch' <-> '553':*");
    expect(tsQuery(parseSearch("a & b | !c")!)).toBe("'a' & 'b' & 'c'");
  });

  it("keeps at most 16 phrases", () => {
    expect(parseSearch(Array.from({ length: 40 }, (_, i) => `w${i}`).join(" "))!.phrases).toHaveLength(16);
  });
});

describe("the PostgreSQL document vector", () => {
  it("is the document's tokens with positions, the head weighted A", () => {
    expect(tsVector({ head: "tool: a.b", body: "reason: a" })).toBe("'a':2A,5 'b':3A 'reason':4 'tool':1A");
  });

  it("folds ASCII words as the full Unicode fold does: lower case, cut at MAX_WORD characters", () => {
    // ASCII words take a short path (a third of PostgreSQL's ingest time was folding): it must
    // give exactly what the full fold gives, which mixed text (an accent in the word) still takes.
    const long = "Ab9".repeat(100);
    expect(tsVector({ head: `REFUND Order-5531 ${long}`, body: "" })).toBe(`'5531':3A '${long.toLowerCase().slice(0, MAX_WORD)}':4A 'order':2A 'refund':1A`);
    expect(tsVector({ head: `${long}é`, body: "" })).toBe(`'${long.toLowerCase().slice(0, MAX_WORD)}':1A`);
    expect(parseSearch("ÉCHEC Échec ECHEC")!.phrases).toEqual([["echec"], ["echec"], ["echec"]]);
  });

  it("scans ASCII text to exactly the words the Unicode tokenizer and fold give", () => {
    // Text with a non-ASCII character takes the general path (a Unicode regex and fold); " é"
    // after an ASCII text adds one word ("e") there and changes none before it. So the short
    // path must give what the general one gives, word for word, on any ASCII text.
    const ascii = fc.string({ unit: fc.constantFrom("a", "Z", "9", "_", "-", "'", "\\", " ", ".", ":", "\t", "\n", "\x00", "\x7f", "Q", "q", "0"), maxLength: 300 });
    const check = (text: string) => {
      const general = foldedWords(`${text} é`);
      return general.pop() === "e" && JSON.stringify(foldedWords(text)) === JSON.stringify(general);
    };
    for (const text of ["", "REFUND Order-5531", "x".repeat(MAX_WORD + 5), `a ${"Ab9".repeat(100)}!`]) expect(check(text)).toBe(true);
    fc.assert(fc.property(ascii, check), { numRuns: 500 });
  });

  it("escapes quotes and backslashes (never produced by the tokenizer, but safe anyway)", () => {
    expect(tsVector({ head: "", body: "" })).toBe("");
  });
});

describe("highlighting: text split into parts, the matching words marked", () => {
  const s = parseSearch("refund 553*")!;

  it("marks whole words equal to a term, and words starting with the prefix term", () => {
    expect(highlightParts("payments.refund for order 5531", s)).toEqual([
      { text: "payments.", mark: false },
      { text: "refund", mark: true },
      { text: " for order ", mark: false },
      { text: "5531", mark: true },
    ]);
  });

  it("folds case and accents as the search does, and marks nothing without a search", () => {
    expect(highlightParts("Crème", parseSearch("creme")!)).toEqual([{ text: "Crème", mark: true }]);
    expect(highlightParts("refunded", parseSearch("refund")!)).toEqual([{ text: "refunded", mark: false }]);
    expect(highlightParts("refunded", parseSearch("refund 5*")!)).toEqual([{ text: "refunded", mark: false }]);
    expect(highlightParts("abc", null)).toEqual([{ text: "abc", mark: false }]);
  });

  it("folds as SQLite's unicode61 indexes: Latin accents only; Hangul, kana and ligatures as written", () => {
    expect(parseSearch("Crème")!.phrases).toEqual([["creme"]]);
    expect(parseSearch("환불")!.phrases).toEqual([["환불"]]);
    expect(parseSearch("データ")!.phrases).toEqual([["データ"]]);
    expect(parseSearch("ﬁle")!.phrases).toEqual([["ﬁle"]]);
    expect(highlightParts("환불 요청", parseSearch("환불")!)).toEqual([{ text: "환불", mark: true }, { text: " 요청", mark: false }]);
  });

  it("never makes a word PostgreSQL refuses (over 2,046 bytes): words are cut at MAX_WORD characters", () => {
    // U+FDFA is one character that a compatibility mapping would turn into 18; Hangul is 3 bytes a syllable.
    for (const text of ["\ufdfa".repeat(300), "각".repeat(3000), "x".repeat(5000)]) {
      const lexemes = tsVector({ head: text, body: text }).match(/'(?:[^']|'')*'/g)!;
      for (const l of lexemes) expect(Buffer.byteLength(l)).toBeLessThanOrEqual(MAX_WORD * 4 + 2);
      const q = parseSearch(text.slice(0, 200))!;
      for (const w of q.phrases.flat()) expect([...w].length).toBeLessThanOrEqual(MAX_WORD);
      expect(Buffer.byteLength(tsQuery(q))).toBeLessThan(2046);
    }
  });

  it("returns markup-free text parts: HTML in data is text", () => {
    const parts = highlightParts("<img src=x onerror=alert(1)> refund", s);
    expect(parts.map((p) => p.text).join("")).toBe("<img src=x onerror=alert(1)> refund");
    expect(parts.filter((p) => p.mark).map((p) => p.text)).toEqual(["refund"]);
  });
});

describe("the snippet: where an operation matched", () => {
  it("names the line that matched, its value cut around the match", () => {
    const d = searchDocument(refund);
    expect(snippetOf(d, parseSearch("crème")!)).toEqual([{ label: "params.lines.sku", parts: [{ text: "Café ", mark: false }, { text: "crème", mark: true }] }]);
  });

  it("prefers lines that match more terms, and shows at most two", () => {
    const d = searchDocument(refund);
    const lines = snippetOf(d, parseSearch("order 5531")!);
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(lines[0].label).toBe("target");
  });

  it("cuts a long value to a window around its first match", () => {
    const d = searchDocument({ operation_id: "op-1", params: { text: `${"lorem ".repeat(20)}needle ${"ipsum ".repeat(20)}` } });
    const [line] = snippetOf(d, parseSearch("needle")!);
    const text = line.parts.map((p) => p.text).join("");
    expect(text.length).toBeLessThanOrEqual(122);
    expect(text.startsWith("…")).toBe(true);
    expect(text.endsWith("…")).toBe(true);
  });

  it("is empty when nothing in the document matches (an id-prefix match)", () => {
    expect(snippetOf(searchDocument(refund), parseSearch("zzz")!)).toEqual([]);
  });
});
