import "server-only";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as PgClient } from "../generated/pg/client";
import { PrismaClient as SqliteClient } from "../generated/sqlite/client";
import { databaseUrl, providerOf, type Db, type Provider, type Tx } from "./database";
import { asSql, type Sql } from "./sql";
import { deadlineOptions } from "./pg-deadline";
import { DirectPg } from "./pg-direct";
import { pgConnection } from "./pg-failover";
import { withoutSchema } from "./pg-hosts";
import { SqliteCheckpointer, WRITER_CHECKPOINT_PAGES } from "./sqlite-checkpointer";
import { DirectSqlite } from "./sqlite-direct";
import { SqliteWriterThread } from "./sqlite-writer";
import { ensureWal } from "./sqlite-wal";
import { envSetting } from "@/lib/domain/settings";
import { projectDatabaseUrl } from "@/lib/domain/projects";
import { currentProjectId, inInstance } from "./project-context";

/**
 * The only place a Prisma client is made, for the database DATABASE_URL names (database.ts:
 * which one, and the client types).
 */

type Clients = {
  provider: Provider;
  writer: Db;
  reader: Db;
  ready: Promise<void>;
  /** SQLite only: the direct ingest connection (sqlite-writer.ts's thread, or sqlite-direct.ts inline), opened at first use. */
  direct: (() => DirectSqlite | SqliteWriterThread) | null;
  /** PostgreSQL only: the ingest pool of the pg driver (pg-direct.ts), opened at first use. */
  directPg: (() => DirectPg) | null;
  /** SQLite only: one write transaction at a time across the writer and the direct connection. */
  lock: WriteLock;
  close: () => Promise<void>;
};

/** A FIFO async lock. */
class WriteLock {
  private tail: Promise<void> = Promise.resolve();
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const before = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await before;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

function connect(url: string): Clients {
  const provider = providerOf(url);
  if (provider === "postgresql") {
    const client = new PgClient({
      // Deadlines for a connection and each answer (pg-deadline.ts); an idle connection that
      // fails is an error event the adapter handles, and the pool replaces it. Several hosts in
      // the URL: each new connection looks for the primary (pg-failover.ts).
      adapter: new PrismaPg({ max: envSetting("DATABASE_POOL_SIZE"), ...deadlineOptions(), ...pgConnection(url) }, withoutSchema(url).schema ? { schema: withoutSchema(url).schema! } : undefined),
    }) as unknown as Db;
    let directPg: DirectPg | null = null;
    return {
      provider,
      writer: client,
      reader: client,
      ready: Promise.resolve(),
      direct: null,
      directPg: () => (directPg ??= new DirectPg(url)),
      lock: new WriteLock(),
      close: async () => {
        await directPg?.close();
        await client.$disconnect();
      },
    };
  }
  // better-sqlite3 is one connection per client, and Prisma's adapter runs every query of an
  // open interactive transaction *and any other query issued meanwhile* on it. A second,
  // read-only connection keeps reads out of in-flight write transactions (WAL lets it read
  // the last committed state while the writer works).
  const file = url.replace(/^file:/, "");
  let checkpointer: SqliteCheckpointer | null = null;
  const writer = new SqliteClient({ adapter: new PrismaBetterSqlite3({ url, timeout: 10_000 }) });
  const reader = new SqliteClient({ adapter: new PrismaBetterSqlite3({ url, timeout: 10_000 }) });
  const ready = (async () => {
    // WAL: readers never block the writer (switched on its own connection first, because
    // another process may be switching the file at the same moment: sqlite-wal.ts).
    // synchronous=FULL: an acknowledged commit survives a process crash and a power loss
    // (docs/RELIABILITY.md has the trade-off).
    await ensureWal(file);
    await writer.$queryRawUnsafe("PRAGMA journal_mode = WAL");
    await writer.$queryRawUnsafe("PRAGMA synchronous = FULL");
    await writer.$queryRawUnsafe("PRAGMA foreign_keys = ON");
    await reader.$queryRawUnsafe("PRAGMA foreign_keys = ON");
    // SQLite's default page cache is 2 MB; with a million operations the indexes no longer fit
    // and every insert reads pages from disk (bench:ui saw ingest fall to ~420 records/s).
    for (const c of [writer, reader]) await c.$queryRawUnsafe("PRAGMA cache_size = -65536");
    // Checkpoints run in a thread of their own (sqlite-checkpointer.ts); the writer's only bound the WAL.
    await writer.$queryRawUnsafe(`PRAGMA wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    if (process.env.RECONCILE_SQLITE_CHECKPOINTER !== "off") {
      try {
        checkpointer = new SqliteCheckpointer(file);
      } catch (e) {
        // better-sqlite3 not found from this directory, say: the writers checkpoint, as before.
        console.warn(`[reconcile] SQLite checkpoints stay with the writers: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  })();
  let direct: DirectSqlite | SqliteWriterThread | null = null;
  return {
    provider,
    writer,
    reader,
    ready,
    // A thread that ended (it should not) is replaced, not left failing every transaction after it.
    direct: () => (direct?.alive ? direct : (direct = directSqlite(file))),
    directPg: null,
    lock: new WriteLock(),
    close: async () => {
      await ready.catch(() => undefined);
      await checkpointer?.stop();
      await direct?.close();
      await writer.$disconnect();
      await reader.$disconnect();
    },
  };
}

/**
 * The ingest connection: in a thread of its own (sqlite-writer.ts), unless
 * `RECONCILE_SQLITE_WRITER=inline` or the thread cannot be made (better-sqlite3 not found from
 * this directory, say): then on this thread (sqlite-direct.ts), as before.
 */
function directSqlite(file: string): DirectSqlite | SqliteWriterThread {
  if (process.env.RECONCILE_SQLITE_WRITER !== "inline") {
    try {
      return new SqliteWriterThread(file, WRITER_CHECKPOINT_PAGES);
    } catch (e) {
      console.warn(`[reconcile] SQLite ingest stays on the request thread: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return new DirectSqlite(file);
}

const globalForDb = globalThis as unknown as { __reconcileDb?: Map<string, Clients> };

/** The URL of the database the store works on now: the current project's (project-context.ts). */
export function currentDatabaseUrl(): string {
  return projectDatabaseUrl(databaseUrl(), currentProjectId());
}

/**
 * The clients of the current project's database (project-context.ts): the instance's own for
 * the default project, a file or schema of its own for another (lib/domain/projects.ts), each
 * opened at first use and kept.
 */
function clients(): Clients {
  const url = currentDatabaseUrl();
  const all = (globalForDb.__reconcileDb ??= new Map());
  let c = all.get(url);
  if (!c) {
    c = connect(url);
    all.set(url, c);
  }
  return c;
}

/** The client for writes: always inside `writeTransaction`. */
export async function writer(): Promise<Db> {
  const c = clients();
  await c.ready;
  return c.writer;
}

/** The client for reads. */
export async function reader(): Promise<Db> {
  const c = clients();
  await c.ready;
  return c.reader;
}

/**
 * Every write goes through here: one transaction, generous waits (SQLite serialises writers
 * through one connection; PostgreSQL through the chain lock).
 *
 * On SQLite the transaction's first statement is a write that changes nothing, so it holds the
 * database's write lock before it reads (what BEGIN IMMEDIATE does; Prisma only opens deferred
 * transactions). Otherwise a transaction that reads, then writes, fails at once with
 * SQLITE_BUSY when another process (a second instance, the command line) wrote in between: a
 * stale read snapshot cannot be upgraded, and the busy timeout does not apply to that.
 */
export async function writeTransaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  const c = clients();
  await c.ready;
  if (c.provider !== "sqlite") return c.writer.$transaction(fn, { maxWait: 20_000, timeout: 60_000 });
  const immediate = async (tx: Tx) => {
    await tx.$executeRawUnsafe("UPDATE chain_lock SET n = n WHERE 0");
    return fn(tx);
  };
  return c.lock.run(() => c.writer.$transaction(immediate, { maxWait: 20_000, timeout: 60_000 }));
}

/**
 * A write transaction for the hot path's raw SQL (ingest): through the direct connection of
 * either database (sqlite-direct.ts, pg-direct.ts). Same guarantees as writeTransaction.
 * `RECONCILE_PG_DIRECT=off` sends PostgreSQL's through a Prisma transaction instead.
 */
export async function sqlWriteTransaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
  const c = clients();
  await c.ready;
  if (c.directPg && process.env.RECONCILE_PG_DIRECT !== "off") return c.directPg().transaction(fn);
  if (!c.direct) return writeTransaction((tx) => fn(asSql(tx)));
  const direct = c.direct;
  return c.lock.run(() => direct().transaction(fn));
}

/**
 * Reads in one consistent snapshot of committed state, on a connection other than the writers'
 * (PostgreSQL's ingest pool only: pg-direct.ts). Null where there is none: SQLite, whose writes
 * run on this same thread so nothing would overlap them, or `RECONCILE_PG_DIRECT=off`.
 */
export async function sqlReadSnapshot<T>(fn: (sql: Sql) => Promise<T>): Promise<T | null> {
  const c = clients();
  await c.ready;
  if (!c.directPg || process.env.RECONCILE_PG_DIRECT === "off") return null;
  return c.directPg().snapshot(fn);
}

/** Closes every database this process opened (each project's). */
export async function disconnect(): Promise<void> {
  const all = globalForDb.__reconcileDb;
  if (!all) return;
  globalForDb.__reconcileDb = undefined;
  await Promise.all([...all.values()].map((c) => c.close()));
}

/** The instance's database (users, tokens, projects, sign-in events): the default project's. */
export function instanceReader(): Promise<Db> {
  return inInstance(() => reader());
}

/** A write transaction on the instance's database, whatever project the caller works in. */
export function instanceWriteTransaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  return inInstance(() => writeTransaction(fn));
}

/** The instance database's writer client (the sign-in throttle's store on PostgreSQL). */
export function instanceWriter(): Promise<Db> {
  return inInstance(() => writer());
}
