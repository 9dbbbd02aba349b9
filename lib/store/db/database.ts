import "server-only";
import type { PrismaClient as SqliteClient } from "../generated/sqlite/client";

/**
 * Which database, and the client types the rest of lib/store is written against. The database
 * is chosen at runtime from DATABASE_URL: `file:` → the embedded SQLite, `postgres(ql)://` →
 * PostgreSQL. Both generated clients share one model API, so lib/store is written once against
 * the SQLite client's types. Its own module so that db.ts (which connects) and sql.ts (whose
 * placeholders differ by database) both read it without importing each other.
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

export function provider(): Provider {
  return providerOf(databaseUrl());
}
