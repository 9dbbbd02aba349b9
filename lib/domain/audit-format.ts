import { stringify } from "csv-stringify/sync";
import type { ChainRecord } from "./hash";

/**
 * The export formats (API.md "Audit export"). Every record carries seq, kind, operation_id,
 * recorded_at, actor, payload, prev_hash and hash, so each line can be re-hashed on its own.
 */
export const AUDIT_FORMATS = ["ndjson", "csv", "json"] as const;
export type AuditFormat = (typeof AUDIT_FORMATS)[number];
export const CSV_COLUMNS = ["seq", "kind", "operation_id", "recorded_at", "actor", "payload", "prev_hash", "hash"] as const;

export const CONTENT_TYPES: Record<AuditFormat, string> = {
  ndjson: "application/x-ndjson; charset=utf-8",
  csv: "text/csv; charset=utf-8",
  json: "application/json; charset=utf-8",
};

/**
 * A spreadsheet runs a cell that starts with = + - @ (or a tab or carriage return) as a
 * formula. Prefixing a single quote makes it inert text (OWASP's CSV injection advice); the
 * payload column is JSON, whose original is in the NDJSON and JSON exports.
 */
export function inertCell(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

export function ndjsonLine(r: ChainRecord | Record<string, unknown>): string {
  return JSON.stringify(r) + "\n";
}

export function csvHeader(): string {
  return stringify([[...CSV_COLUMNS]]);
}

/**
 * A checkpoint as a CSV row: `kind` checkpoint and an empty `seq` (every chained record has
 * one), so a reader tells it from a record by its columns, never by what a payload says. The
 * payload column holds the checkpoint itself; `hash` its head.
 */
export function csvCheckpointRow(c: { size: number; head: string; time: string }, payload: Record<string, unknown>): string {
  return stringify([["", "checkpoint", "", c.time, "", JSON.stringify(payload), "", c.head].map(inertCell)]);
}

/** The chain count of a trail of several chains, as the first CSV row: `kind` chains, an empty `seq`, the count in `payload`. */
export function csvChainsRow(chains: number): string {
  return stringify([["", "chains", "", "", "", JSON.stringify({ chains }), "", ""]]);
}

/** A note about archived records as a CSV row: `kind` archive, an empty `seq`, the note in `payload`, the head they end at in `hash`. */
export function csvNoteRow(note: { kind: string; sealed_at: string; head_hash: string }): string {
  return stringify([["", note.kind, "", note.sealed_at, "", JSON.stringify(note), "", note.head_hash].map(inertCell)]);
}

export function csvRow(r: ChainRecord): string {
  const cells = [String(r.seq), r.kind, r.operation_id ?? "", r.recorded_at, r.actor ?? "", JSON.stringify(r.payload), r.prev_hash, r.hash];
  return stringify([cells.map(inertCell)]);
}
