/**
 * COPY … FROM STDIN for bench:ingest's raw ceilings: PostgreSQL's bulk-load path, through
 * pg-copy-streams (the `pg` driver has no COPY of its own). Rows are sent in COPY's text format:
 * columns split by tabs, rows by newlines, NULL as `\N`, and a backslash, tab, newline or
 * carriage return inside a value escaped with a backslash (PostgreSQL's COPY documentation,
 * "Text Format").
 */
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";

const SPECIAL = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };

/**
 * One value in COPY's text format. A plain object is written as JSON text (a jsonb column's
 * input); an array, a date or a buffer is refused: each has a text form of its own in
 * PostgreSQL, and none is needed here.
 */
export function copyText(v: unknown): string {
  if (v === null || v === undefined) return "\\N";
  if (typeof v === "boolean") return v ? "t" : "f";
  if (typeof v === "object" && (Array.isArray(v) || v instanceof Date || Buffer.isBuffer(v))) {
    throw new Error(`copyText takes strings, numbers, booleans, null and plain objects, not ${Array.isArray(v) ? "an array" : v instanceof Date ? "a date" : "a buffer"}`);
  }
  const s = typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v);
  return SPECIAL.test(s) ? s.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]) : s;
}

/** Rows as one COPY text-format document. */
export function copyDocument(rows: unknown[][]): string {
  let out = "";
  for (const r of rows) {
    for (let i = 0; i < r.length; i++) out += (i ? "\t" : "") + copyText(r[i]);
    out += "\n";
  }
  return out;
}

/** COPY these rows into `table` (its `columns`, in order), on this client's current transaction. */
export function copyRows(client: pg.Client, table: string, columns: string[], rows: unknown[][]): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(`COPY ${table} (${columns.join(", ")}) FROM STDIN`));
    stream.on("finish", () => resolve());
    stream.on("error", reject);
    stream.end(copyDocument(rows));
  });
}
