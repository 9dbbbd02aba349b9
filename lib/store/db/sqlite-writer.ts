import "server-only";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { ingestPacer } from "./pace";
import { checkWrite, type Sql } from "./sql";

/**
 * The embedded database's ingest connection in a thread of its own (issue 51): the same
 * statements as sqlite-direct.ts, run by better-sqlite3 in a worker thread, so that SQLite's own
 * work for ingest — every row inserted, its indexes and triggers, COMMIT's sync — no longer
 * holds the thread that serves pages (a CPU profile under unpaced ingest had SQLite's inserts
 * and commits at ~40 % of the request thread's time for a receipt).
 *
 * The request thread still decides, validates and hashes; it sends statements in order over one
 * message port and waits for an answer only where it needs one: a read's rows, and COMMIT.
 * Other statements (writes, inserts, the chain lock's) are sent without waiting (the Sql contract allows a write to be sent later,
 * as PostgreSQL's connection does); the thread runs everything in the order sent, and once a
 * statement of a transaction fails it runs nothing more of it and that first failure is what the
 * next read or COMMIT answers — so a write's failure still fails its whole transaction, and it
 * rolls back (write-transaction.itest.ts holds both connections to that).
 *
 * One writer per file, as before: db.ts's lock runs one write transaction of this process at a
 * time, and BEGIN IMMEDIATE takes SQLite's write lock first (a busy wait for another process
 * now waits in that thread, not in the request thread). Acknowledged still means committed:
 * nothing is answered before COMMIT's answer comes back. `RECONCILE_SQLITE_WRITER=inline` keeps
 * the connection on the request thread (sqlite-direct.ts).
 */

/** The worker, as plain JavaScript (it runs outside any bundler, as the checkpointer's). */
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 10000 });
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
db.pragma("foreign_keys = ON");
db.pragma("cache_size = -65536");
db.pragma("wal_autocheckpoint = " + workerData.checkpointPages);
const statements = new Map();
function statement(sql) {
  let s = statements.get(sql);
  if (!s) {
    if (statements.size >= 256) statements.clear();
    s = db.prepare(sql);
    statements.set(sql, s);
  }
  return s;
}
const bind = (v) => (v instanceof Uint8Array && !Buffer.isBuffer(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v);
// The first failure of the transaction under way: nothing more of it runs, and it is the answer.
let failed = null;
const errorOf = (e) => ({ message: e && e.message ? e.message : String(e), code: e && e.code, name: e && e.name });
parentPort.on("message", (m) => {
  let reply;
  try {
    switch (m.op) {
      case "begin":
        failed = null;
        statement("BEGIN IMMEDIATE").run();
        break;
      case "all":
        if (failed) throw failed;
        reply = statement(m.sql).all(...m.params.map(bind));
        break;
      case "run": {
        if (failed) throw failed;
        const s = statement(m.sql);
        if (s.reader) s.all(...m.params.map(bind));
        else s.run(...m.params.map(bind));
        break;
      }
      case "insert": {
        if (failed) throw failed;
        const s = statement(m.sql);
        for (const row of m.rows) s.run(...row.map(bind));
        break;
      }
      case "commit":
        if (failed) throw failed;
        statement("COMMIT").run();
        break;
      case "rollback":
        failed = null;
        if (db.inTransaction) statement("ROLLBACK").run();
        break;
      case "close":
        statements.clear();
        db.close();
        parentPort.close();
        return;
    }
    if (m.id) parentPort.postMessage({ id: m.id, rows: reply });
  } catch (e) {
    // A failed BEGIN too: what follows it must not run outside a transaction.
    if (m.op !== "rollback") failed = failed || e;
    if (m.id) parentPort.postMessage({ id: m.id, error: errorOf(failed ?? e) });
  }
});
`;

type Pending = { resolve: (rows: unknown) => void; reject: (e: unknown) => void };
type Reply = { id: number; rows?: unknown; error?: { message: string; code?: string; name?: string } };

/** Rows per message of an insert: a batch of tens of thousands is sent in slices, the pacer between them. */
const ROWS_PER_MESSAGE = 500;

export class SqliteWriterThread implements Sql {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private dead: Error | null = null;

  constructor(file: string, checkpointPages: number) {
    const driver = createRequire(`${process.cwd()}/`).resolve("better-sqlite3");
    this.worker = new Worker(WORKER, { eval: true, execArgv: [], workerData: { file, driver, checkpointPages } });
    this.worker.on("message", (m: Reply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error) p.reject(Object.assign(new Error(m.error.message), { code: m.error.code, name: m.error.name ?? "SqliteError" }));
      else p.resolve(Array.isArray(m.rows) ? m.rows.map(asBuffers) : m.rows);
    });
    const fail = (e: Error) => {
      this.dead ??= e;
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`the SQLite writer thread ended (exit code ${code})`)));
    // Waiting on nothing, it must not keep a command's process alive.
    this.worker.unref();
  }

  /** False once the thread has ended (db.ts then opens another for the next transaction). */
  get alive(): boolean {
    return this.dead === null;
  }

  /** Sends without waiting: the thread runs it in order, and a failure is the next answer's. */
  private send(m: Record<string, unknown>): void {
    if (this.dead) throw this.dead;
    this.worker.postMessage(m);
  }

  /** Sends and waits for the answer. */
  private ask<T>(m: Record<string, unknown>): Promise<T> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (rows: unknown) => void, reject });
      // Held while an answer is awaited: a command waiting on its transaction is not at its end.
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage({ ...m, id });
    }).finally(() => {
      if (!this.pending.size) this.worker.unref();
    });
  }

  async all<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.ask<T[]>({ op: "all", sql, params: params.map(bindable) });
  }

  /** Sent without waiting, as a write: nothing is read from it, and a failure is the next answer's. */
  async run(sql: string, params: unknown[] = []): Promise<void> {
    this.send({ op: "run", sql, params: params.map(bindable) });
  }

  async write(table: string, sql: string, params: unknown[] = []): Promise<void> {
    checkWrite(table, sql);
    this.send({ op: "run", sql, params: params.map(bindable) });
  }

  async insert(table: string, columns: string[], rows: unknown[][]): Promise<void> {
    if (!rows.length) return;
    const sql = `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;
    const pace = ingestPacer({ holdsLock: true });
    for (let i = 0; i < rows.length; i += ROWS_PER_MESSAGE) {
      await pace();
      const slice = rows.length <= ROWS_PER_MESSAGE ? rows : rows.slice(i, i + ROWS_PER_MESSAGE);
      this.send({ op: "insert", sql, rows: slice.map((row) => row.map(bindable)) });
    }
  }

  /**
   * One write transaction, answered when COMMIT is: db.ts runs every write transaction of this
   * process under one lock, so nothing else is sent to the thread meanwhile.
   */
  async transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    this.send({ op: "begin" });
    try {
      const value = await fn(this);
      await this.ask({ op: "commit" });
      return value;
    } catch (e) {
      if (!this.dead) await this.ask({ op: "rollback" }).catch(() => undefined);
      throw e;
    }
  }

  /** Closes the connection and ends the thread. */
  async close(): Promise<void> {
    if (this.dead) return;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.ref();
    this.worker.postMessage({ op: "close" });
    const timer = setTimeout(() => void this.worker.terminate(), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

/** A row as better-sqlite3 gives it: a blob crossed the thread as a Uint8Array, and is a Buffer again. */
function asBuffers(row: Record<string, unknown>): Record<string, unknown> {
  for (const k in row) {
    const v = row[k];
    if (v instanceof Uint8Array && !Buffer.isBuffer(v)) row[k] = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  }
  return row;
}

/** Values as better-sqlite3 binds them: booleans as 0/1 (as Prisma stores them), no undefined. */
function bindable(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  return v;
}
