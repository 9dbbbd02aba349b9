import "server-only";
import { provider, type Db, type Tx } from "./db";

/**
 * Raw SQL for the hot paths (ingest, chain append, projection writes). Prisma's model API
 * spends most of a 100-record batch mapping rows through its runtime (bench:ingest measured
 * ~2 ms a record); one multi-row statement per table costs a fraction. The SQL here is the
 * subset SQLite and PostgreSQL share; only placeholders differ.
 */
const MAX_PARAMS = 30_000;

/** Placeholder lists are rebuilt for every statement otherwise; the shapes repeat, so keep them. */
const listCache = new Map<string, string>();

function cached(key: string, build: () => string): string {
  let text = listCache.get(key);
  if (text === undefined) {
    if (listCache.size >= 128) listCache.clear();
    text = build();
    listCache.set(key, text);
  }
  return text;
}

/** "(?, ?), (?, ?)" or "($1, $2), ($3, $4)" for rows × width, numbered from `start`. */
function valuesList(rows: number, width: number, start = 1): string {
  const pg = provider() === "postgresql";
  return cached(`v${pg ? "p" : "s"}${rows}x${width}@${start}`, () => {
    const out: string[] = [];
    let n = start;
    for (let r = 0; r < rows; r++) {
      const cells: string[] = [];
      for (let c = 0; c < width; c++) cells.push(pg ? `$${n++}` : "?");
      out.push(`(${cells.join(", ")})`);
    }
    return out.join(", ");
  });
}

export function inList(count: number, start = 1): string {
  const pg = provider() === "postgresql";
  return cached(`i${pg ? "p" : "s"}${count}@${start}`, () => {
    const cells: string[] = [];
    for (let i = 0; i < count; i++) cells.push(pg ? `$${start + i}` : "?");
    return `(${cells.join(", ")})`;
  });
}

export async function insertMany(tx: Tx, table: string, columns: string[], rows: unknown[][]): Promise<void> {
  if (!rows.length) return;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const sql = `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${valuesList(chunk.length, columns.length)}`;
    await tx.$executeRawUnsafe(sql, ...chunk.flat());
  }
}

/** SELECT … WHERE column IN (ids), chunked; `sql` holds one `%IN%` marker. */
export async function selectIn<T>(db: Db | Tx, sql: string, ids: string[]): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += MAX_PARAMS) {
    const chunk = ids.slice(i, i + MAX_PARAMS);
    out.push(...((await db.$queryRawUnsafe(sql.replace("%IN%", inList(chunk.length)), ...chunk)) as T[]));
  }
  return out;
}

export async function deleteIn(tx: Tx, table: string, column: string, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += MAX_PARAMS) {
    const chunk = ids.slice(i, i + MAX_PARAMS);
    await tx.$executeRawUnsafe(`DELETE FROM ${table} WHERE ${column} IN ${inList(chunk.length)}`, ...chunk);
  }
}
