import { describe, expect, it } from "vitest";
import { exportRecordCounter } from "./audit-count";
import { csvChainsRow, csvCheckpointRow, csvHeader, csvRow, ndjsonLine, type AuditFormat } from "./audit-format";
import type { ChainRecord } from "./hash";

const record = (seq: number, payload: unknown): ChainRecord =>
  ({ seq, kind: "receipt", operation_id: `op-${seq}`, recorded_at: "2026-11-30T10:00:00.000Z", actor: "a\n,checkpoint,", payload, prev_hash: "0".repeat(64), hash: "1".repeat(64) }) as unknown as ChainRecord;
const checkpoint = { kind: "checkpoint", size: 2, head: "1".repeat(64), time: "2026-11-30T10:00:00.000Z" };
// A payload that says it is a checkpoint, and a line break inside a quoted CSV cell.
const tricky = [record(1, { kind: "checkpoint", text: "x\n,checkpoint" }), record(2, { ok: true })];

/** Feeds the export in chunks of `size` bytes, cutting lines, rows and characters anywhere. */
function count(format: AuditFormat, text: string, size: number) {
  const bytes = new TextEncoder().encode(text);
  const counter = exportRecordCounter(format);
  for (let i = 0; i < bytes.length; i += size) counter.push(bytes.subarray(i, i + size));
  return counter.finish();
}

const exports: Record<AuditFormat, (records: ChainRecord[]) => string> = {
  ndjson: (rs) => rs.map(ndjsonLine).join("") + ndjsonLine(checkpoint),
  csv: (rs) => csvHeader() + rs.map(csvRow).join("") + csvCheckpointRow(checkpoint, checkpoint),
  json: (rs) => JSON.stringify({ records: rs, checkpoints: [checkpoint] }),
};

describe("exportRecordCounter", () => {
  for (const format of ["ndjson", "csv", "json"] as const) {
    it(`counts the records of a ${format} export and not its checkpoints, however the stream is cut`, () => {
      for (const size of [1, 3, 7, 64, 100_000]) {
        expect(count(format, exports[format](tricky), size)).toBe(2);
        expect(count(format, exports[format]([]), size)).toBe(0);
      }
    });
  }
});

describe("an export of several chains", () => {
  // It starts with the chain count: a line (row, field) that is no record.
  const several: Record<AuditFormat, (records: ChainRecord[]) => string> = {
    ndjson: (rs) => ndjsonLine({ kind: "chains", chains: 4 }) + exports.ndjson(rs),
    csv: (rs) => csvHeader() + csvChainsRow(4) + rs.map(csvRow).join("") + csvCheckpointRow(checkpoint, checkpoint),
    json: (rs) => JSON.stringify({ chains: 4, records: rs, checkpoints: [checkpoint] }),
  };
  for (const format of ["ndjson", "csv", "json"] as const) {
    it(`counts the records of a ${format} export and not its chain count`, () => {
      for (const size of [1, 5, 100_000]) expect(count(format, several[format](tricky), size)).toBe(2);
    });
  }
});
