import "server-only";
import { provider, type Db, type Tx } from "./database";
import { namesTable } from "./pg-statements";

/**
 * Raw SQL for the hot paths (ingest, chain append, projection writes). Prisma's model API
 * spends most of a 100-record batch mapping rows through its runtime (bench:ingest measured
 * ~2 ms a record); one multi-row statement per table costs a fraction. The SQL here is the
 * subset SQLite and PostgreSQL share; only placeholders differ.
 *
 * It runs against `Sql`: a Prisma client or transaction (wrapped by `asSql`), or the embedded
 * database's direct ingest connection (`sqlite-direct.ts`), which runs the same statements
 * prepared once instead of through Prisma's runtime.
 */
const MAX_PARAMS = 30_000;

/** What the hot-path SQL needs from a connection or transaction. */
export interface Sql {
  /** Rows of a query; `?` placeholders on SQLite, `$1…` on PostgreSQL (see `inList`). */
  all<T>(sql: string, params?: unknown[]): Promise<T[]>;
  run(sql: string, params?: unknown[]): Promise<void>;
  /** INSERT rows × columns (values already in database form). */
  insert(table: string, columns: string[], rows: unknown[][]): Promise<void>;
  /**
   * A write to `table` whose result nothing reads. PostgreSQL's ingest connection may send it
   * later, with others, but always before any statement that could see it (pg-direct.ts); the
   * others run it at once. `fixed`: the text is one of a few, worth preparing once.
   */
  write(table: string, sql: string, params?: unknown[], fixed?: boolean): Promise<void>;
}

/** A Prisma client or interactive transaction as `Sql`: multi-row statements, chunked. */
class PrismaSql implements Sql {
  constructor(private readonly db: Db | Tx) {}
  async all<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.db.$queryRawUnsafe(sql, ...params)) as T[];
  }
  async run(sql: string, params: unknown[] = []): Promise<void> {
    await this.db.$executeRawUnsafe(sql, ...params);
  }
  async write(table: string, sql: string, params: unknown[] = []): Promise<void> {
    checkWrite(table, sql);
    await this.run(sql, params);
  }
  async insert(table: string, columns: string[], rows: unknown[][]): Promise<void> {
    for (const chunk of statementChunks(rows, columns.length)) {
      const sql = `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${valuesList(chunk.length, columns.length)}`;
      await this.db.$executeRawUnsafe(sql, ...chunk.flat());
    }
  }
}

export type SqlLike = Db | Tx | Sql;

/** A write names the table it says it writes (PostgreSQL's connection holds writes by table). */
export function checkWrite(table: string, sql: string): void {
  if (!namesTable(sql, table)) throw new Error(`a write said to be to ${table} does not name it: ${sql.slice(0, 80)}`);
}

export function asSql(db: SqlLike): Sql {
  return "$queryRawUnsafe" in db ? new PrismaSql(db) : db;
}

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

/** The n-th parameter's placeholder (from 1): `$n` on PostgreSQL, `?` on SQLite. */
export function placeholder(n: number): string {
  return provider() === "postgresql" ? `$${n}` : "?";
}

/** "(?, ?), (?, ?)" or "($1, $2), ($3, $4)" for rows × width. */
function valuesList(rows: number, width: number): string {
  return cached(`v${provider()}${rows}x${width}`, () => {
    const out: string[] = [];
    let n = 1;
    for (let r = 0; r < rows; r++) {
      const cells: string[] = [];
      for (let c = 0; c < width; c++) cells.push(placeholder(n++));
      out.push(`(${cells.join(", ")})`);
    }
    return out.join(", ");
  });
}

export function inList(count: number): string {
  return cached(`i${provider()}${count}`, () => {
    const cells: string[] = [];
    for (let i = 1; i <= count; i++) cells.push(placeholder(i));
    return `(${cells.join(", ")})`;
  });
}

/** Rows in slices small enough for one statement's parameters (`width` values a row). */
function* statementChunks<T>(rows: T[], width: number): Generator<T[]> {
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / width));
  for (let i = 0; i < rows.length; i += perStatement) yield rows.slice(i, i + perStatement);
}

export async function insertMany(db: SqlLike, table: string, columns: string[], rows: unknown[][]): Promise<void> {
  if (!rows.length) return;
  await asSql(db).insert(table, columns, rows);
}

/** INSERT rows, skipping any whose `conflict` columns match a stored row (`ON CONFLICT DO NOTHING`, the same on both). */
export async function insertManyIgnoringConflicts(db: SqlLike, table: string, columns: string[], rows: unknown[][], conflict: string[]): Promise<void> {
  const q = asSql(db);
  for (const chunk of statementChunks(rows, columns.length)) {
    await q.run(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${valuesList(chunk.length, columns.length)} ON CONFLICT (${conflict.join(", ")}) DO NOTHING`, chunk.flat());
  }
}

/**
 * Adds rows to counters: each row (key columns, then count columns) is inserted, or its counts
 * are added to the row already under that key. `ON CONFLICT … DO UPDATE` is the same on both.
 */
export async function addToCounters(db: SqlLike, table: string, keys: string[], counts: string[], rows: unknown[][]): Promise<void> {
  const q = asSql(db);
  const width = keys.length + counts.length;
  const add = counts.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(", ");
  for (const chunk of statementChunks(rows, width)) {
    await q.write(
      table,
      `INSERT INTO ${table} (${[...keys, ...counts].join(", ")}) VALUES ${valuesList(chunk.length, width)} ON CONFLICT (${keys.join(", ")}) DO UPDATE SET ${add}`,
      chunk.flat(),
    );
  }
}

/** SELECT … WHERE column IN (ids), chunked; `sql` holds one `%IN%` marker. */
/**
 * `sql` with `%IN%` replaced by the ids' list, a statement per chunk. `after`: further
 * parameters, written `%P1%`, `%P2%`… in the text, which must come after `%IN%` in it (SQLite
 * binds `?` in the order they appear).
 */
export async function selectIn<T>(db: SqlLike, sql: string, ids: (string | number)[], after: unknown[] = []): Promise<T[]> {
  const out: T[] = [];
  const q = asSql(db);
  for (const chunk of statementChunks(ids, 1 + after.length)) {
    const text = sql.replace("%IN%", inList(chunk.length)).replace(/%P(\d+)%/g, (_, k: string) => placeholder(chunk.length + Number(k)));
    out.push(...(await q.all<T>(text, [...chunk, ...after])));
  }
  return out;
}

export async function deleteIn(db: SqlLike, table: string, column: string, ids: (string | number)[]): Promise<void> {
  const q = asSql(db);
  for (const chunk of statementChunks(ids, 1)) {
    await q.run(`DELETE FROM ${table} WHERE ${column} IN ${inList(chunk.length)}`, chunk);
  }
}
