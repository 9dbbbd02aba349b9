import "server-only";
import { csvCheckpointRow, csvHeader, csvRow, ndjsonLine, type AuditFormat } from "@/lib/domain/audit-format";
import { formatCheckpoint } from "@/lib/domain/checkpoint";
import { exportRecords, type ExportQuery } from "@/lib/store/audit-export";
import { allCheckpoints } from "@/lib/store/checkpoints";

/**
 * The export as text chunks, for the HTTP stream and the CLI file alike. Signed checkpoints
 * follow the records, so an auditor has them in hand: in NDJSON and CSV a line (row) with a
 * top-level kind "checkpoint" and no seq, in JSON the separate `checkpoints` array.
 */
export async function* exportText(q: ExportQuery): AsyncGenerator<string> {
  const format: AuditFormat = q.format;
  let batch = "";
  const flushAt = 64 * 1024;
  if (format === "csv") batch += csvHeader();
  if (format === "json") batch += '{"records":[';
  let first = true;
  const snapshot: { head?: number } = {};
  for await (const r of exportRecords(q, snapshot)) {
    batch += format === "ndjson" ? ndjsonLine(r) : format === "csv" ? csvRow(r) : `${first ? "" : ","}${JSON.stringify(r)}`;
    first = false;
    if (batch.length >= flushAt) {
      yield batch;
      batch = "";
    }
  }
  // Only checkpoints within the exported chain: one signed while the export ran lies beyond it.
  const checkpoints = (await allCheckpoints()).filter((c) => snapshot.head !== undefined && c.size <= snapshot.head);
  if (format === "json") {
    batch += `],"checkpoints":${JSON.stringify(checkpoints.map((c) => ({ ...c, text: formatCheckpoint(c) })))}}`;
  } else {
    for (const c of checkpoints) {
      const row = { kind: "checkpoint", ...c, text: formatCheckpoint(c) };
      batch += format === "ndjson" ? ndjsonLine(row) : csvCheckpointRow(c, row);
    }
  }
  if (batch) yield batch;
}

export function toReadableStream(chunks: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await chunks.next();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}
