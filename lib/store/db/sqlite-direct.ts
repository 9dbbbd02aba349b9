import "server-only";
import Database from "better-sqlite3";
import { ingestPacer } from "./pace";
import { WRITER_CHECKPOINT_PAGES } from "./sqlite-checkpointer";
import { checkWrite, type Sql } from "./sql";

/**
 * The embedded database's ingest connection: better-sqlite3 itself, with statements prepared
 * once and reused, for the one path where Prisma's per-query runtime was the cost
 * (bench:ingest: a third of the server's time under batched load went to Prisma mapping
 * thousands of parameters and re-preparing the same statements).
 *
 * It is a second writer connection on the same file, so db.ts serialises it with the Prisma
 * writer in this process (one write transaction at a time), and each transaction starts with
 * BEGIN IMMEDIATE, which takes SQLite's write lock before anything is read: against other
 * processes it waits (busy_timeout) instead of failing on a stale snapshot. The pragmas are
 * the Prisma writer's: WAL, synchronous=FULL, foreign keys on, the WAL's bound.
 */
export class DirectSqlite implements Sql {
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /** On the request thread it cannot end by itself (sqlite-writer.ts's thread can). */
  readonly alive = true;

  constructor(file: string) {
    this.db = new Database(file, { timeout: 10_000 });
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = FULL");
    this.db.pragma("foreign_keys = ON");
    this.db.pragma("cache_size = -65536");
    // The WAL's bound; the checkpoints themselves run in sqlite-checkpointer.ts's thread.
    this.db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
  }

  private statement(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      // The shapes repeat (placeholder counts follow batch sizes); keep the cache bounded anyway.
      if (this.statements.size >= 256) this.statements.clear();
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  async all<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.statement(sql).all(...params.map(bindable)) as T[];
  }

  async run(sql: string, params: unknown[] = []): Promise<void> {
    const stmt = this.statement(sql);
    if (stmt.reader) stmt.all(...params.map(bindable));
    else stmt.run(...params.map(bindable));
  }

  async write(table: string, sql: string, params: unknown[] = []): Promise<void> {
    checkWrite(table, sql);
    await this.run(sql, params);
  }

  async insert(table: string, columns: string[], rows: unknown[][]): Promise<void> {
    if (!rows.length) return;
    const stmt = this.statement(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
    // Tens of thousands of rows (a 4 MiB batch) in slices: other requests are served between
    // them. Safe inside the transaction: db.ts's lock keeps every other writer out meanwhile.
    const pace = ingestPacer({ holdsLock: true });
    for (const row of rows) {
      await pace();
      stmt.run(...row.map(bindable));
    }
  }

  /**
   * One write transaction. Nothing else runs on the connection meanwhile: db.ts runs every
   * write transaction of this process under one lock, so `fn` may yield to the event loop.
   */
  async transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    this.statement("BEGIN IMMEDIATE").run();
    try {
      const value = await fn(this);
      this.statement("COMMIT").run();
      return value;
    } catch (e) {
      if (this.db.inTransaction) this.statement("ROLLBACK").run();
      throw e;
    }
  }

  close(): void {
    this.statements.clear();
    this.db.close();
  }
}

/** Values as better-sqlite3 binds them: booleans as 0/1 (as Prisma stores them), no undefined. */
function bindable(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  return v;
}
