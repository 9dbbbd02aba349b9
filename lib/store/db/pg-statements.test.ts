import { describe, expect, it } from "vitest";
import { combineWrites, inlineValues, namesTable, sqlLiteral, valueChars } from "./pg-statements";

describe("combineWrites", () => {
  it("sends one write as it is", () => {
    const w = { table: "a", text: "INSERT INTO a (x) VALUES ($1)", values: [1] };
    expect(combineWrites([w])).toEqual({ text: w.text, values: [1] });
  });

  it("joins several as WITH parts, renumbering each one's placeholders after the ones before", () => {
    const out = combineWrites([
      { table: "a", text: "INSERT INTO a (x, y) VALUES ($1, $2)", values: [1, 2] },
      { table: "b", text: "INSERT INTO b (x) SELECT (r->>0)::int FROM jsonb_array_elements($1::jsonb) AS r", values: ["[[3]]"] },
      { table: "c", text: "INSERT INTO c (x) VALUES ($1), ($2), ($3), ($4), ($5), ($6), ($7), ($8), ($9), ($10)", values: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] },
    ]);
    expect(out.text).toBe(
      "WITH w0 AS (INSERT INTO a (x, y) VALUES ($1, $2)), " +
        "w1 AS (INSERT INTO b (x) SELECT (r->>0)::int FROM jsonb_array_elements($3::jsonb) AS r), " +
        "w2 AS (INSERT INTO c (x) VALUES ($4), ($5), ($6), ($7), ($8), ($9), ($10), ($11), ($12), ($13)) SELECT 1",
    );
    expect(out.values).toEqual([1, 2, "[[3]]", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe("sqlLiteral", () => {
  it.each([
    [null, "NULL"],
    [undefined, "NULL"],
    [true, "'true'"],
    [false, "'false'"],
    [42, "'42'"],
    [-1.5, "'-1.5'"],
    [1e21, "'1e+21'"],
    [12345678901234567890n, "'12345678901234567890'"],
    ["plain", "E'plain'"],
    ["it's", "E'it''s'"],
    ["back\\slash", "E'back\\\\slash'"],
    ["\\'; DROP TABLE chain_records; --", "E'\\\\''; DROP TABLE chain_records; --'"],
    ["$1 and $2", "E'$1 and $2'"],
  ])("case %# → %s", (v, out) => {
    expect(sqlLiteral(v)).toBe(out);
  });

  it("refuses what no PostgreSQL text holds, or what has no one text", () => {
    expect(() => sqlLiteral("a\u0000b")).toThrow(/NUL/);
    expect(() => sqlLiteral(Number.NaN)).toThrow(/finite/);
    expect(() => sqlLiteral(Infinity)).toThrow(/finite/);
    expect(() => sqlLiteral({})).toThrow(/string, number/);
    expect(() => sqlLiteral(new Date())).toThrow(/a date/);
  });
});

describe("valueChars", () => {
  it("counts strings by length and other values a little each", () => {
    expect(valueChars(["abc", "", "x".repeat(70_000)])).toBe(70_003);
    expect(valueChars([1, null, true])).toBe(72);
  });
});

describe("inlineValues", () => {
  it("replaces every placeholder once, never rescanning a value's own text", () => {
    expect(inlineValues("INSERT INTO t (a, b) VALUES ($1, $2), ($10, $2)", ["$2", "x", 3, 4, 5, 6, 7, 8, 9, null])).toBe(
      "INSERT INTO t (a, b) VALUES (E'$2', E'x'), (NULL, E'x')",
    );
  });

  it("refuses a placeholder with no value", () => {
    expect(() => inlineValues("SELECT $2", [1])).toThrow(/\$2/);
    expect(() => inlineValues("SELECT $0", [1])).toThrow(/\$0/);
  });
});

describe("namesTable", () => {
  it("finds a table as a whole word only", () => {
    expect(namesTable("SELECT * FROM operations WHERE x", "operations")).toBe(true);
    expect(namesTable("SELECT * FROM operation_views", "operations")).toBe(false);
    expect(namesTable("SELECT * FROM operation_views", "operation_views")).toBe(true);
    expect(namesTable("DELETE FROM operation_views_old", "operation_views")).toBe(false);
    expect(namesTable('SELECT 1 FROM "chain_records"', "chain_records")).toBe(true);
    expect(namesTable("operations", "operations")).toBe(true);
    expect(namesTable("SELECT tool, rate FROM audit_sampling", "audit_samples")).toBe(false);
  });
});
