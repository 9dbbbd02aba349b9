import "server-only";
import { mergeLinks, type TraceLink } from "@/lib/domain/trace-link";
import { lockChain, lockDerived } from "../chain/chain";
import { reader, sqlWriteTransaction } from "../db/db";
import { placeholder, type Sql } from "../db/sql";
import { linkKey, readTraceLinks } from "../projection/projection";
import { relinkTraces } from "../projection/trace-links";

/** Rows per upsert statement (5 values each). */
const ROWS_PER_STATEMENT = 1000;

/**
 * Keeps what a user's OTLP spans say of their traces (lib/otlp/trace-links.ts): each trace's conversation
 * and agent, each set by the first span that names it and never changed (a later span naming
 * another conversation is ignored). When a trace gains a value, the operations that wait on it
 * (that user's) are derived again in the same transaction (relinkTraces), so a conversation groups its tool
 * calls whichever order their spans arrived in. Returns the traces whose link changed.
 */
export async function recordTraceLinks(links: Map<string, TraceLink>, ownerId: string | null): Promise<string[]> {
  if (!links.size) return [];
  const ids = [...links.keys()];
  // Every span of a conversation names it: most requests repeat what is stored, and take no lock.
  const stored = await readTraceLinks(await reader(), ids);
  if (!ids.some((id) => mergeLinks(stored.get(linkKey(id, ownerId)), links.get(id)!).changed)) return [];
  return sqlWriteTransaction(async (tx) => {
    // The lock every projection write takes (the chain's with one chain; the derived rows' with
    // several), so an operation of the trace being written meanwhile reads the link once this
    // commits, or is committed and found here.
    await lockChain(tx, [null]);
    await lockDerived(tx);
    const current = await readTraceLinks(tx, ids);
    const now = new Date().toISOString();
    const rows: unknown[][] = [];
    for (const id of ids) {
      const { link, changed } = mergeLinks(current.get(linkKey(id, ownerId)), links.get(id)!);
      if (changed) rows.push([id, ownerId ?? "", link.conversation, link.agent, now]);
    }
    await upsert(tx, rows);
    const changed = rows.map((r) => r[0] as string);
    await relinkTraces(tx, changed, ownerId);
    return changed;
  });
}

/** Inserts the rows, or sets the two fields of a trace's stored row (already merged with it under the lock). */
async function upsert(tx: Sql, rows: unknown[][]): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(i, i + ROWS_PER_STATEMENT);
    let n = 0;
    const values = chunk.map(() => `(${[1, 2, 3, 4, 5].map(() => placeholder(++n)).join(", ")})`).join(", ");
    await tx.run(
      `INSERT INTO otel_trace_links (trace_id, owner_id, conversation_id, agent, created_at) VALUES ${values} ` +
        "ON CONFLICT (trace_id, owner_id) DO UPDATE SET conversation_id = excluded.conversation_id, agent = excluded.agent",
      chunk.flat(),
    );
  }
}
