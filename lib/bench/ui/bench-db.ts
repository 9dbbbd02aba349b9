/** The few reads bench:ui makes itself, per database (not through the pages' store functions). */
import { existsSync, mkdirSync, mkdtempSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { ChainVerifier, type ChainVerdict } from "@/lib/domain/hash";
import { providerOf } from "@/lib/store/db/database";
import { reader, writer } from "@/lib/store/db/db";
import { verifyStoredChain } from "@/lib/store/chain/verify-chain";
import { log } from "./log";

export type ChainCheck = { ok: boolean; count: number; detail: string };

/**
 * Counts, the outcome mix, sample inputs and the chain check: read straight from the SQLite file
 * (better-sqlite3, read only) or through the store's PostgreSQL client. Positions are 1-based
 * places in insertion order (SQLite: the dense rowid; PostgreSQL: the rank by created_seq).
 */
export interface BenchDb {
  /** Where the database is, and what it is (for the header). */
  readonly where: string;
  kind(): Promise<string>;
  count(table: string): Promise<number>;
  outcomeMix(): Promise<{ o: string; n: number }[]>;
  sizeMb(): Promise<number>;
  /** How many positions `table` has (the largest one). */
  positions(table: "operations" | "operation_views"): Promise<number>;
  /** The operation at each position of `operations`. */
  operationsAt(positions: number[]): Promise<string[]>;
  /** For each position of `operation_views`: the trajectory of the first view there or later that has one. */
  trajectoriesFrom(positions: number[]): Promise<string[]>;
  /** created_seq of the view `offset` rows into created_seq order. */
  createdSeqAt(offset: number): Promise<number>;
  maxCreatedSeq(): Promise<number>;
  verifyChain(): Promise<ChainCheck>;
  /** After bulk writes: SQLite folds the WAL back; PostgreSQL vacuums and analyses, as autovacuum would. */
  settle(): Promise<void>;
  /** Drops the benchmark's own connection (SQLite; the store's client is left to `disconnect`). */
  close(): void;
}

export class SqliteBench implements BenchDb {
  private handle: Database.Database | null = null;
  constructor(readonly where: string) {}

  private get db() {
    this.handle ??= new Database(this.where, { readonly: true });
    return this.handle;
  }
  private num(sql: string, ...args: unknown[]) {
    return (this.db.prepare(sql).get(...args) as { n: number }).n;
  }
  async kind() {
    return "SQLite (embedded, WAL)";
  }
  async count(table: string) {
    return this.num(`SELECT count(*) AS n FROM ${table}`);
  }
  async outcomeMix() {
    return this.db.prepare("SELECT effective_outcome AS o, count(*) AS n FROM operation_views GROUP BY 1 ORDER BY 2 DESC").all() as { o: string; n: number }[];
  }
  async sizeMb() {
    return statSync(this.where).size / 1024 / 1024;
  }
  // Rowids are dense: insert order.
  async positions(table: string) {
    return this.num(`SELECT max(rowid) AS n FROM ${table}`);
  }
  async operationsAt(positions: number[]) {
    const at = this.db.prepare("SELECT operation_id AS id FROM operations WHERE rowid = ?").pluck();
    return positions.map((p) => at.get(p) as string);
  }
  async trajectoriesFrom(positions: number[]) {
    const at = this.db.prepare("SELECT trajectory_id AS id FROM operation_views WHERE rowid >= ? AND trajectory_id IS NOT NULL LIMIT 1").pluck();
    return positions.map((p) => at.get(p) as string);
  }
  async createdSeqAt(offset: number) {
    return this.db.prepare("SELECT created_seq FROM operation_views ORDER BY created_seq LIMIT 1 OFFSET ?").pluck().get(offset) as number;
  }
  async maxCreatedSeq() {
    return this.num("SELECT max(created_seq) AS n FROM operation_views");
  }
  /** Every link of the chain, straight from the file (the same ChainVerifier as audit:verify). */
  async verifyChain(): Promise<ChainCheck> {
    const v = new ChainVerifier();
    const rows = this.db.prepare("SELECT seq, kind, operation_id, recorded_at, actor, payload, prev_hash, hash FROM chain_records ORDER BY seq").iterate() as IterableIterator<{
      seq: number;
      kind: "stage";
      operation_id: string | null;
      recorded_at: string;
      actor: string | null;
      payload: string;
      prev_hash: string;
      hash: string;
    }>;
    for (const r of rows) {
      if (!v.push({ ...r, payload: JSON.parse(r.payload) })) break;
    }
    return toCheck(v.verdict());
  }
  async settle() {
    await (await writer()).$queryRawUnsafe("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  close() {
    this.handle?.close();
    this.handle = null;
  }
}

/** PostgreSQL has no rowid: a position is a rank by created_seq, looked up for all samples in one scan. */
class PostgresBench implements BenchDb {
  constructor(readonly where: string) {}

  private async rows<T>(sql: string, ...args: unknown[]): Promise<T[]> {
    return (await reader()).$queryRawUnsafe<T[]>(sql, ...args);
  }
  // count(*) and friends are bigint on PostgreSQL.
  private async num(sql: string, ...args: unknown[]) {
    return Number((await this.rows<{ n: bigint | number | null }>(sql, ...args))[0]?.n ?? 0);
  }
  /** Rows of `table` at the given ranks of created_seq order, keyed by rank. */
  private async atRanks<T>(table: string, column: string, positions: number[]): Promise<Map<number, T>> {
    const found = await this.rows<{ rn: bigint; v: T }>(
      `SELECT rn, v FROM (SELECT ${column} AS v, row_number() OVER (ORDER BY created_seq) AS rn FROM ${table}) ranked ` +
        `WHERE rn = ANY(string_to_array($1, ',')::bigint[])`,
      [...new Set(positions)].join(","),
    );
    return new Map(found.map((r) => [Number(r.rn), r.v]));
  }
  async kind() {
    const [{ v }] = await this.rows<{ v: string }>("SELECT current_setting('server_version') AS v");
    return `PostgreSQL ${v.split(" ")[0]}`;
  }
  count(table: string) {
    return this.num(`SELECT count(*) AS n FROM ${table}`);
  }
  async outcomeMix() {
    const mix = await this.rows<{ o: string; n: bigint }>("SELECT effective_outcome AS o, count(*) AS n FROM operation_views GROUP BY 1 ORDER BY 2 DESC");
    return mix.map((m) => ({ o: m.o, n: Number(m.n) }));
  }
  async sizeMb() {
    return (await this.num("SELECT pg_database_size(current_database()) AS n")) / 1024 / 1024;
  }
  positions(table: string) {
    return this.count(table);
  }
  async operationsAt(positions: number[]) {
    const at = await this.atRanks<string>("operations", "operation_id", positions);
    return positions.map((p) => at.get(p)!);
  }
  async trajectoriesFrom(positions: number[]) {
    const seqs = await this.atRanks<number>("operation_views", "created_seq", positions);
    const next = new Map<number, string>();
    for (const seq of new Set(seqs.values())) {
      const [row] = await this.rows<{ id: string }>(
        "SELECT trajectory_id AS id FROM operation_views WHERE created_seq >= $1 AND trajectory_id IS NOT NULL ORDER BY created_seq LIMIT 1",
        seq,
      );
      next.set(seq, row?.id);
    }
    return positions.map((p) => next.get(seqs.get(p)!)!);
  }
  createdSeqAt(offset: number) {
    return this.num("SELECT created_seq AS n FROM operation_views ORDER BY created_seq LIMIT 1 OFFSET $1", offset);
  }
  maxCreatedSeq() {
    return this.num("SELECT max(created_seq) AS n FROM operation_views");
  }
  /** Every link, page by page through the store (the same ChainVerifier as audit:verify). */
  async verifyChain() {
    return toCheck((await verifyStoredChain()).verdict);
  }
  async settle() {
    log("VACUUM (ANALYZE) of the seeded tables, as autovacuum would do after a bulk load…");
    for (const table of ["chain_records", "operations", "operation_views", "operation_keys", "operation_edges", "operation_search"]) {
      await (await writer()).$executeRawUnsafe(`VACUUM (ANALYZE) ${table}`);
    }
  }
  close() {}
}

function toCheck(verdict: ChainVerdict): ChainCheck {
  return verdict.ok ? { ok: true, count: verdict.count, detail: `head ${verdict.head.slice(0, 16)}…` } : { ok: false, count: verdict.count, detail: `bad seq ${verdict.badSeq}: ${verdict.problem}` };
}

/**
 * `--database-url` (PostgreSQL), else `--db PATH`, else a fresh temp file. Sets DATABASE_URL for
 * the store. `fresh`: the SQLite file did not exist yet (null on PostgreSQL: empty means fresh).
 */
export function openBench(options: { db?: string; databaseUrl?: string }): { bench: BenchDb; url: string; fresh: boolean | null; reuseHint: string } {
  const pgUrl = options.databaseUrl ?? process.env.BENCH_DATABASE_URL;
  if (pgUrl) {
    if (options.db) throw new Error("pass --db (SQLite) or --database-url (PostgreSQL), not both");
    if (providerOf(pgUrl) !== "postgresql") throw new Error("--database-url / BENCH_DATABASE_URL must be postgresql://… (use --db for SQLite)");
    process.env.DATABASE_URL = pgUrl;
    const u = new URL(pgUrl);
    const bench = new PostgresBench(`${u.host}${u.pathname}`);
    return { bench, url: pgUrl, fresh: null, reuseHint: "drop its tables or pass another --database-url" };
  }
  const dbFile = options.db ? path.resolve(options.db) : path.join(mkdtempSync(path.join(os.tmpdir(), "reconcile-bench-ui-")), "bench.db");
  mkdirSync(path.dirname(dbFile), { recursive: true });
  const url = `file:${dbFile}`;
  process.env.DATABASE_URL = url;
  return { bench: new SqliteBench(dbFile), url, fresh: !existsSync(dbFile), reuseHint: "delete it or pass another --db" };
}
