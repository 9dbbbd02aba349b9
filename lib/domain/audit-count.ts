import type { AuditFormat } from "./audit-format";

/**
 * Counts the chained records in an export as it streams, leaving out its checkpoints (and the
 * chain count of several chains), which a reader tells apart by structure (AUDIT.md): in NDJSON a
 * line whose object has no `seq`; in CSV a row with an empty `seq` (and the header is no record); in
 * JSON the `records` array, counted once the document is complete.
 */
export function exportRecordCounter(format: AuditFormat) {
  const decoder = new TextDecoder();
  let records = 0;
  let text = ""; // JSON: the whole document; NDJSON and CSV: the unfinished last line or row
  let csvHeaderSeen = false;
  let inQuotes = false;
  let rowStart = 0;

  const ndjsonLine = (line: string) => {
    if (!line.trim()) return;
    const v = JSON.parse(line) as Record<string, unknown>;
    // Checkpoints and the chain count of several chains are the lines without a seq.
    if ("seq" in v) records++;
  };
  const csvRow = (row: string) => {
    if (!row.trim()) return;
    if (!csvHeaderSeen) return void (csvHeaderSeen = true);
    // A record's first cell is its seq; a checkpoint's is empty.
    if (!row.startsWith(",")) records++;
  };

  /** Reads the complete lines or rows in `text`, keeping the unfinished rest. */
  const drain = () => {
    if (format === "ndjson") {
      const lines = text.split("\n");
      text = lines.pop() ?? "";
      lines.forEach(ndjsonLine);
    } else if (format === "csv") {
      // A quoted cell may hold a line break, so a row ends only at a break outside quotes.
      let start = 0;
      for (let i = rowStart; i < text.length; i++) {
        const c = text[i];
        if (c === '"') inQuotes = !inQuotes;
        else if (c === "\n" && !inQuotes) {
          csvRow(text.slice(start, i));
          start = i + 1;
        }
      }
      text = text.slice(start);
      rowStart = text.length;
    }
  };

  return {
    push(chunk: Uint8Array) {
      text += decoder.decode(chunk, { stream: true });
      if (format !== "json") drain();
      return records;
    },
    /** The count once the stream has ended. */
    finish(): number {
      text += decoder.decode();
      if (format === "json") return (records = (JSON.parse(text) as { records: unknown[] }).records.length);
      if (format === "ndjson") ndjsonLine(text);
      else csvRow(text.replace(/\r?\n$/, ""));
      text = "";
      return records;
    },
  };
}
