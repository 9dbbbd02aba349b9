import "server-only";
import type { OperationState, StoredStage } from "@/lib/domain/operation";
import { wellFormed } from "@/lib/domain/json";
import { ftsMatch, parseSearch, searchDocument, searchSourceOf, snippetOf, tsQuery, tsVector, type ParsedSearch, type SearchDocument, type SearchSource, type SnippetLine } from "@/lib/domain/search";
import { provider, type Db, type Tx } from "../db/database";
import { asSql, deleteIn, inList, insertMany, selectIn, type SqlLike } from "../db/sql";

/**
 * The free-text search index: one row per operation in `operation_search` (migration
 * `search_index`), an FTS5 table on SQLite (rowid = the operation's created_seq), a table with a
 * tsvector column and a GIN index on PostgreSQL (the texts in `operation_search_text`). The
 * document is built by lib/domain/search.ts, so both databases index the same words; rows are
 * replaced by writeProjection in the projection's own transaction, like every other derived row.
 */

/** How many of the newest matching operations are ranked (keeps a common word's cost bounded at any size). */
export const RANK_WINDOW = 1000;

/** The search sources of operations being written by writeProjection (correction reasons when the caller has them). */
export function searchRowsOf(
  ops: { identity: { operationId: string; createdSeq: number }; stages: StoredStage[]; corrections?: { reason?: string }[] }[],
  states: Map<string, OperationState>,
): { createdSeq: number; source: SearchSource }[] {
  return ops.map(({ identity, stages, corrections }) => ({
    createdSeq: identity.createdSeq,
    source: searchSourceOf(identity.operationId, stages, states.get(identity.operationId)!, (corrections ?? []).flatMap((c) => (c.reason ? [c.reason] : []))),
  }));
}

/** One operation's search row, ready to write: its document, and on PostgreSQL its tsvector text. */
export type SearchRow = { seq: number; id: string; doc: SearchDocument; vector: string | null };

/** The search rows of these operations (pure: ingest computes them before the chain lock when it can). */
export function searchRows(ops: { createdSeq: number; source: SearchSource }[]): SearchRow[] {
  const pg = provider() === "postgresql";
  return ops.map((o) => {
    const doc = searchDocument(o.source);
    // The document is a tsvector literal built in code, cast by the server.
    return { seq: o.createdSeq, id: o.source.operation_id, doc, vector: pg ? wellFormed(tsVector(doc)) : null };
  });
}

/** A row's tsvector: searchRows makes one wherever the database is PostgreSQL. */
function vectorOf(d: SearchRow): string {
  if (d.vector === null) throw new Error(`the search row of ${d.id} has no tsvector: made by searchRows for another database`);
  return d.vector;
}

/** Replaces the search rows of `stale` (created_seqs) with these (searchRows). */
export async function writeSearchRows(db: SqlLike, docs: SearchRow[], stale: number[]): Promise<void> {
  const tx = asSql(db);
  const pg = provider() === "postgresql";
  if (stale.length) {
    await deleteIn(tx, "operation_search", pg ? "created_seq" : "rowid", stale as unknown as string[]);
    if (pg) await deleteIn(tx, "operation_search_text", "created_seq", stale as unknown as string[]);
  }
  if (!docs.length) return;
  if (!pg) {
    await insertMany(tx, "operation_search", ["rowid", "head", "body", "operation_id"], docs.map((d) => [d.seq, d.doc.head, d.doc.body, d.id]));
    return;
  }
  // The rows travel as one JSON document, as pg-direct.ts sends every INSERT: faster than
  // rows × columns parameters (bench:ingest prints both raw methods).
  for (let i = 0; i < docs.length; i += 1000) {
    const chunk = docs.slice(i, i + 1000);
    await tx.write(
      "operation_search",
      "INSERT INTO operation_search (created_seq, operation_id, document) SELECT (r->>0)::int4, r->>1, (r->>2)::tsvector FROM jsonb_array_elements($1::jsonb) AS r",
      [JSON.stringify(chunk.map((d) => [d.seq, d.id, vectorOf(d)]))],
      true,
    );
    await insertMany(tx, "operation_search_text", ["created_seq", "head", "body"], chunk.map((d) => [d.seq, d.doc.head, d.doc.body]));
  }
}

/** Empties the index (projections:rebuild). */
export async function clearSearchIndex(db: SqlLike): Promise<void> {
  await asSql(db).run("DELETE FROM operation_search");
  if (provider() === "postgresql") await asSql(db).run("DELETE FROM operation_search_text");
}

export type SearchResult = {
  /** Matching operation ids, best first: id matches, then by relevance, newest first among equals. */
  ids: string[];
  /** More matched than were considered: refine the search. */
  capped: boolean;
  /** The words the query searched for (null: it has none, only the id match ran). */
  parsed: ParsedSearch | null;
};

/**
 * Operations matching `q`: an operation id that is `q` or starts with it (a range on the
 * operations table's key), then a receipt or evidence id that does (a range on operation_keys),
 * then the full-text matches, ranked (bm25 / ts_rank) among the RANK_WINDOW newest. At most
 * `limit` in all; `only`: among these operations alone.
 */
export async function searchOperations(db: Db | Tx, q: string, limit: number, only?: string[]): Promise<SearchResult> {
  const { ids, capped: idsCapped } = await idMatches(db, q, limit, only);
  let capped = idsCapped;
  const parsed = parseSearch(q);
  if (parsed && !capped) {
    const found = await fullText(db, parsed, limit, only);
    capped = found.length === limit;
    const have = new Set(ids);
    for (const id of found) {
      if (ids.length >= limit) {
        capped = true;
        break;
      }
      if (!have.has(id)) ids.push(id);
    }
  }
  return { ids, capped, parsed };
}

/**
 * Operations whose id, receipt id or evidence id is `q` or starts with it: at most `limit`,
 * exact matches first, then operation ids, then receipt and evidence ids, each in key order.
 */
async function idMatches(db: Db | Tx, q: string, limit: number, only?: string[]): Promise<{ ids: string[]; capped: boolean }> {
  const range = { gte: q, lt: q + "\uffff" };
  const own = await db.operation.findMany({
    where: { operationId: only ? { ...range, in: only } : range },
    select: { operationId: true },
    orderBy: { operationId: "asc" },
    take: limit,
  });
  let within: number[] | undefined;
  if (only) {
    within = (await db.operation.findMany({ where: { operationId: { in: only } }, select: { createdSeq: true } })).map((o) => o.createdSeq);
  }
  const among = within ? { createdSeq: { in: within } } : {};
  // An exact receipt or evidence id always; the prefix range only while there is room.
  const keyed = await db.operationKey.findMany({ where: { key: q, ...among }, select: { key: true, createdSeq: true }, take: limit });
  let prefixed: typeof keyed = [];
  if (own.length < limit) {
    prefixed = await db.operationKey.findMany({ where: { key: range, ...among }, select: { key: true, createdSeq: true }, orderBy: { key: "asc" }, take: limit });
  }
  const seqs = [...new Set([...keyed, ...prefixed].map((k) => k.createdSeq))];
  const idOf = new Map<number, string>();
  if (seqs.length) {
    for (const o of await db.operation.findMany({ where: { createdSeq: { in: seqs } }, select: { operationId: true, createdSeq: true } })) idOf.set(o.createdSeq, o.operationId);
  }
  const ordered = [
    ...own.filter((o) => o.operationId === q).map((o) => o.operationId),
    ...keyed.map((k) => idOf.get(k.createdSeq)),
    ...own.map((o) => o.operationId),
    ...prefixed.map((k) => idOf.get(k.createdSeq)),
  ];
  const ids = [...new Set(ordered.filter((id): id is string => id !== undefined))];
  const capped = own.length === limit || prefixed.length === limit || ids.length > limit;
  return { ids: ids.slice(0, limit), capped };
}

async function fullText(db: Db | Tx, parsed: ParsedSearch, limit: number, only?: string[]): Promise<string[]> {
  const sql = asSql(db);
  if (only && !only.length) return [];
  if (provider() === "postgresql") {
    const within = only ? ` AND operation_id IN (${only.map((_, i) => `$${i + 4}`).join(", ")})` : "";
    const rows = await sql.all<{ id: string }>(
      `SELECT s.operation_id AS id FROM (
         SELECT created_seq, operation_id, document FROM operation_search
         WHERE document @@ CAST($1 AS tsquery)${within} ORDER BY created_seq DESC LIMIT $2
       ) s ORDER BY ts_rank(s.document, CAST($1 AS tsquery)) DESC, s.created_seq DESC LIMIT $3`,
      [tsQuery(parsed), RANK_WINDOW, limit, ...(only ?? [])],
    );
    return rows.map((r) => r.id);
  }
  // FTS5: bm25 is smaller for a better match; the head's words weigh four times the body's.
  // Only rowids inside (reading a column costs a row of the content table each); the ids of
  // the ranked few are read by rowid at the end.
  let within = "";
  let seqs: number[] = [];
  if (only) {
    seqs = (await selectIn<{ seq: number | bigint }>(db, "SELECT created_seq AS seq FROM operations WHERE operation_id IN %IN%", only)).map((r) => Number(r.seq));
    if (!seqs.length) return [];
    // `+rowid`: FTS5 (SQLite 3.53) given MATCH and `rowid IN (one value)` or `rowid = ?`
    // returned every match; filtering outside the virtual table is right (search.itest.ts).
    within = ` AND +rowid IN ${inList(seqs.length)}`;
  }
  const rows = await sql.all<{ id: string }>(
    `SELECT t.operation_id AS id FROM (
       SELECT seq, score FROM (
         SELECT rowid AS seq, bm25(operation_search, 4.0, 1.0) AS score FROM operation_search
         WHERE operation_search MATCH ?${within} ORDER BY rowid DESC LIMIT ?
       ) ORDER BY score, seq DESC LIMIT ?
     ) s JOIN operation_search t ON t.rowid = s.seq ORDER BY s.score, s.seq DESC`,
    [ftsMatch(parsed), ...seqs, RANK_WINDOW, limit],
  );
  return rows.map((r) => r.id);
}

/** Where each of these operations (by created_seq) matched: up to two lines of its document. */
export async function searchSnippets(db: Db | Tx, seqs: number[], parsed: ParsedSearch | null): Promise<Map<number, SnippetLine[]>> {
  const out = new Map<number, SnippetLine[]>();
  if (!parsed || !seqs.length) return out;
  const pg = provider() === "postgresql";
  const rows = await selectIn<{ seq: number | bigint; head: string; body: string }>(
    db,
    pg ? "SELECT created_seq AS seq, head, body FROM operation_search_text WHERE created_seq IN %IN%" : "SELECT rowid AS seq, head, body FROM operation_search WHERE rowid IN %IN%",
    seqs as unknown as string[],
  );
  for (const r of rows) {
    const lines = snippetOf({ head: r.head, body: r.body }, parsed);
    if (lines.length) out.set(Number(r.seq), lines);
  }
  return out;
}

/**
 * One page of ranked results: rows in `order` (their place in the search result; newest first
 * among equals), after the row whose created_seq is `cursor` (a ranked page's cursor is its last
 * row, as in the newest-first list).
 */
export function rankedPage<T extends { operationId: string; createdSeq: number }>(rows: T[], order: string[], cursor: number | undefined, take: number): T[] {
  const place = new Map(order.map((id, i) => [id, i]));
  const sorted = [...rows].sort((a, b) => place.get(a.operationId)! - place.get(b.operationId)! || b.createdSeq - a.createdSeq);
  if (cursor === undefined) return sorted.slice(0, take);
  const at = sorted.findIndex((r) => r.createdSeq === cursor);
  return at < 0 ? [] : sorted.slice(at + 1, at + 1 + take);
}
