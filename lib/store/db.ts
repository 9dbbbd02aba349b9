import "server-only";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as PgClient } from "./generated/pg/client";
import { PrismaClient as SqliteClient } from "./generated/sqlite/client";

/**
 * The only place a Prisma client is made. The database is chosen at runtime from DATABASE_URL:
 * `file:` → the embedded SQLite, `postgres(ql)://` → PostgreSQL. Both generated clients share
 * one model API, so the rest of lib/store is written once against the SQLite client's types.
 */
export type Db = SqliteClient;
export type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];
export type Provider = "sqlite" | "postgresql";

export const DEFAULT_DATABASE_URL = "file:./data/reconcile.db";

export function databaseUrl(): string {
  return process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
}

export function providerOf(url: string): Provider {
  if (url.startsWith("file:")) return "sqlite";
  if (/^postgres(ql)?:\/\//.test(url)) return "postgresql";
  throw new Error(`DATABASE_URL must start with file: or postgresql:// (got ${url.split(":")[0]}:)`);
}

type Clients = { provider: Provider; writer: Db; reader: Db; ready: Promise<void> };

function connect(url: string): Clients {
  const provider = providerOf(url);
  if (provider === "postgresql") {
    const client = new PgClient({
      adapter: new PrismaPg({ connectionString: url, max: Number(process.env.DATABASE_POOL_SIZE || 10) }),
    }) as unknown as Db;
    return { provider, writer: client, reader: client, ready: Promise.resolve() };
  }
  // better-sqlite3 is one connection per client, and Prisma's adapter runs every query of an
  // open interactive transaction *and any other query issued meanwhile* on it. A second,
  // read-only connection keeps reads out of in-flight write transactions (WAL lets it read
  // the last committed state while the writer works).
  const writer = new SqliteClient({ adapter: new PrismaBetterSqlite3({ url, timeout: 10_000 }) });
  const reader = new SqliteClient({ adapter: new PrismaBetterSqlite3({ url, timeout: 10_000 }) });
  const ready = (async () => {
    // WAL: readers never block the writer. synchronous=FULL: an acknowledged commit survives a
    // process crash and a power loss (docs/RELIABILITY.md has the trade-off).
    await writer.$queryRawUnsafe("PRAGMA journal_mode = WAL");
    await writer.$queryRawUnsafe("PRAGMA synchronous = FULL");
    await writer.$queryRawUnsafe("PRAGMA foreign_keys = ON");
    await reader.$queryRawUnsafe("PRAGMA foreign_keys = ON");
    // SQLite's default page cache is 2 MB; with a million operations the indexes no longer fit
    // and every insert reads pages from disk (bench:ui saw ingest fall to ~420 records/s).
    for (const c of [writer, reader]) await c.$queryRawUnsafe("PRAGMA cache_size = -65536");
  })();
  return { provider, writer, reader, ready };
}

const globalForDb = globalThis as unknown as { __reconcileDb?: Clients & { url: string } };

function clients(): Clients {
  const url = databaseUrl();
  if (!globalForDb.__reconcileDb || globalForDb.__reconcileDb.url !== url) {
    globalForDb.__reconcileDb = { ...connect(url), url };
  }
  return globalForDb.__reconcileDb;
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

export function provider(): Provider {
  return providerOf(databaseUrl());
}

/**
 * Every write goes through here: one transaction, generous waits (SQLite serialises writers
 * through one connection; PostgreSQL through the chain lock).
 */
export async function writeTransaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  const db = await writer();
  return db.$transaction(fn, { maxWait: 20_000, timeout: 60_000 });
}

export async function disconnect(): Promise<void> {
  const c = globalForDb.__reconcileDb;
  if (!c) return;
  globalForDb.__reconcileDb = undefined;
  await c.writer.$disconnect();
  if (c.reader !== c.writer) await c.reader.$disconnect();
}
