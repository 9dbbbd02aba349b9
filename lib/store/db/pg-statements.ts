/**
 * Pure helpers for pg-direct.ts's fewer round trips: several writes of one transaction sent as
 * one statement, and the last of them sent with COMMIT in one message.
 *
 * Why it matters: a statement's answer waits for the Node.js event loop to come round, and on a
 * busy server that is other requests' work (parsing, validating, hashing) in slices of up to
 * 25 ms. An ingest transaction holds the chain lock through ~19 round trips; each one that is
 * saved is a wait less inside the lock (docs/BENCHMARKS.md, "Fewer round trips").
 */

/** One write whose result nothing reads: a table, a statement text with `$1…` placeholders, its values. */
export type Write = { table: string; text: string; values: unknown[] };

/** `$n` placeholders (a `$` then digits). The write texts here hold no `$` otherwise: no dollar quoting, no literals with `$`. */
const PLACEHOLDER = /\$(\d+)/g;

/**
 * Several writes as one statement: `WITH w0 AS (…), w1 AS (…) SELECT 1`, each write's
 * placeholders renumbered after the ones before it. PostgreSQL runs every data-modifying WITH
 * part to completion, all on one snapshot: none sees another's rows, which is why pg-direct.ts
 * never holds two writes of one table at once, and flushes them before any read of their tables.
 */
export function combineWrites(writes: Write[]): { text: string; values: unknown[] } {
  if (writes.length === 1) return { text: writes[0].text, values: writes[0].values };
  const parts: string[] = [];
  const values: unknown[] = [];
  for (const w of writes) {
    const offset = values.length;
    parts.push(`w${parts.length} AS (${offset ? w.text.replace(PLACEHOLDER, (_, n: string) => `$${Number(n) + offset}`) : w.text})`);
    for (const v of w.values) values.push(v);
  }
  return { text: `WITH ${parts.join(", ")} SELECT 1`, values };
}

/**
 * At most this many values in one statement: the protocol counts a statement's parameters in 16
 * bits (65,535), and the driver does not check. Each write is already below it (sql.ts's chunks).
 */
export const MAX_STATEMENT_VALUES = 30_000;

/**
 * The last writes travel with COMMIT as text only up to this many characters of values: a
 * larger batch goes as parameters first. Text costs copies of the batch in memory, and a
 * statement that fails is written whole to the server's log, parameters never are.
 */
export const INLINE_MAX_CHARS = 64 * 1024;

/**
 * A value as an SQL literal, for a statement sent as text (the simple query protocol, which
 * alone lets a write and COMMIT travel in one message). Every value but NULL is a quoted literal
 * of no type holding the text the driver would have sent as a parameter, so the server reads
 * it as it reads a parameter (a number into a text column stays as written, `1.5` into an
 * integer column is refused). Strings are `E'…'` with backslashes and quotes doubled: correct
 * whatever `standard_conforming_strings` says, as the driver's own `escapeLiteral` does. A NUL,
 * which no PostgreSQL text can hold and which would end the message early, is refused, as the
 * server refuses it in a parameter.
 */
export function sqlLiteral(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "boolean") return v ? "'true'" : "'false'";
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error(`a value for PostgreSQL must be a finite number, not ${v}`);
    return `'${String(v)}'`;
  }
  if (typeof v === "bigint") return `'${v.toString()}'`;
  if (typeof v === "string") {
    if (v.includes("\0")) throw new Error("a text value for PostgreSQL cannot hold a NUL character");
    return `E'${v.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
  }
  throw new Error(`a value for PostgreSQL sent as text must be a string, number, boolean or null, not ${v instanceof Date ? "a date" : typeof v}`);
}

/** Characters the values would take as text (strings by length, the rest a few each). */
export function valueChars(values: unknown[]): number {
  let n = 0;
  for (const v of values) n += typeof v === "string" ? v.length : 24;
  return n;
}

/** The statement with each `$n` replaced by its value as a literal (one pass: a value's own text is never rescanned). */
export function inlineValues(text: string, values: unknown[]): string {
  return text.replace(PLACEHOLDER, (_, n: string) => {
    const i = Number(n) - 1;
    if (i < 0 || i >= values.length) throw new Error(`the statement names $${n}, and it has ${values.length} values`);
    return sqlLiteral(values[i]);
  });
}

/** Whether a statement names a table (as a whole word: `operations` is not in `operation_views`). */
export function namesTable(text: string, table: string): boolean {
  let re = tableWords.get(table);
  if (!re) tableWords.set(table, (re = new RegExp(`(^|[^A-Za-z0-9_])${table}([^A-Za-z0-9_]|$)`)));
  return re.test(text);
}
/** One expression a table (a few dozen tables; asked several times a transaction). */
const tableWords = new Map<string, RegExp>();
