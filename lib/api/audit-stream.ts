import "server-only";
import { boundToProject } from "@/lib/store/db/project-context";
import { csvChainsRow, csvCheckpointRow, csvNoteRow, csvHeader, csvRow, ndjsonLine, type AuditFormat } from "@/lib/domain/audit-format";
import { formatCheckpoint } from "@/lib/domain/checkpoint";
import { checkpointWithin, exportRecords, type ExportQuery, type ExportSnapshot } from "@/lib/store/chain/audit-export";
import { allCheckpoints } from "@/lib/store/chain/checkpoints";
import { archivedPart } from "./audit-archive";

/**
 * The export as text chunks, for the HTTP stream and the CLI file alike. Signed checkpoints
 * follow the records, so an auditor has them in hand: in NDJSON and CSV a line (row) with a
 * top-level kind "checkpoint" and no seq, in JSON the separate `checkpoints` array. A trail of
 * several chains starts with their count: a line (row) of kind "chains", in JSON a `chains` field.
 */
export async function* exportText(q: ExportQuery): AsyncGenerator<string> {
  const format: AuditFormat = q.format;
  let batch = "";
  const flushAt = 64 * 1024;
  if (format === "csv") batch += csvHeader();
  let first = true;
  const snapshot: ExportSnapshot = {};
  const records = exportRecords(q, snapshot);
  // The first record is read before anything is written, so the chain count is known: several
  // chains are named first (a verifier needs the count to know which seqs belong together).
  const next = await records.next();
  const chains = snapshot.chains ?? 1;
  if (chains > 1) batch += format === "ndjson" ? ndjsonLine({ kind: "chains", chains }) : format === "csv" ? csvChainsRow(chains) : "";
  // Records retention sealed: a note first, then (when the archive is readable) those records from it.
  const archived = chains === 1 ? await archivedPart(q) : null;
  if (archived) batch += format === "ndjson" ? ndjsonLine(archived.note) : format === "csv" ? csvNoteRow(archived.note) : "";
  if (format === "json") batch += `{${chains > 1 ? `"chains":${chains},` : ""}${archived ? `"archive":${JSON.stringify(archived.note)},` : ""}"records":[`;
  async function* all() {
    if (archived?.records) yield* archived.records;
    if (!next.done) yield next.value;
    yield* records;
  }
  for await (const r of all()) {
    batch += format === "ndjson" ? ndjsonLine(r) : format === "csv" ? csvRow(r) : `${first ? "" : ","}${JSON.stringify(r)}`;
    first = false;
    if (batch.length >= flushAt) {
      yield batch;
      batch = "";
    }
  }
  // Only checkpoints within the exported chain: one signed while the export ran lies beyond it.
  const checkpoints = (await allCheckpoints()).filter((c) => checkpointWithin(c, snapshot));
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
  // The server pulls the stream after the route returned, outside its project: each read goes back into it.
  const next = boundToProject(() => chunks.next());
  const end = boundToProject(() => chunks.return(undefined));
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await next();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel() {
      await end();
    },
  });
}
