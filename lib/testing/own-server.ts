/**
 * For integration tests that need a server of their own (special environment, or an empty
 * database): a fresh database of the suite's kind — a temporary SQLite file, or a new database on
 * the suite's PostgreSQL server, dropped afterwards — migrated by the real deploy, and plain
 * queries against it from the test.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import pg from "pg";
import { dropTestDatabase } from "./drop-database";
import { createMigratedPostgres, migrateSqlite } from "./migrated";
import { afterAll, afterEach, inject } from "vitest";
import { startApp, type App } from "@/lib/reliability/harness";

export type FreshDatabase = {
  url: string;
  /** A read ($1, $2… parameters on both databases). */
  query: <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;
  /** A write outside the server, as a test's damage or a restored backup would be. */
  execute: (sql: string, params?: unknown[]) => Promise<void>;
  drop: () => Promise<void>;
};

/** A new, migrated, empty database of the same kind as the suite's (a copy of the run's template: lib/testing/migrated.ts). */
export async function freshDatabase(tag: string): Promise<FreshDatabase> {
  const shared = inject("databaseUrl");
  if (shared.startsWith("file:")) {
    const dir = mkdtempSync(path.join(os.tmpdir(), `reconcile-${tag}-`));
    const url = `file:${path.join(dir, "test.db")}`;
    await migrateSqlite(url);
    return {
      url,
      query: async <T>(sql: string, params: unknown[] = []) => {
        const db = new Database(url.slice("file:".length), { readonly: true });
        try {
          return db.prepare(sql.replace(/\$\d+/g, "?")).all(...params) as T[];
        } finally {
          db.close();
        }
      },
      execute: async (sql: string, params: unknown[] = []) => {
        const db = new Database(url.slice("file:".length));
        try {
          db.pragma("busy_timeout = 10000");
          db.prepare(sql.replace(/\$\d+/g, "?")).run(...params);
        } finally {
          db.close();
        }
      },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `reconcile_${tag}_${randomUUID().slice(0, 8)}`.replace(/\W/g, "_").toLowerCase();
  const url = await createMigratedPostgres(shared, name);
  return {
    url,
    query: async <T>(sql: string, params: unknown[] = []) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(sql, params)).rows as T[];
      } finally {
        await client.end();
      }
    },
    execute: async (sql: string, params: unknown[] = []) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(sql, params);
      } finally {
        await client.end();
      }
    },
    drop: () => dropTestDatabase(shared, name),
  };
}

/**
 * Production servers of a test file's own on SQLite files in a temporary folder, one at a time:
 * each is stopped after its test; after the file, DATABASE_URL (prepareDatabase sets it) is as
 * it was and the folder is gone. `url(name)`: a database file's URL in that folder.
 */
export function ownSqliteServers(prefix: string) {
  const tmp = mkdtempSync(path.join(os.tmpdir(), `reconcile-${prefix}-`));
  const before = process.env.DATABASE_URL;
  let app: App | null = null;
  afterEach(async () => {
    await app?.stop();
    app = null;
  });
  afterAll(() => {
    if (before === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = before;
    rmSync(tmp, { recursive: true, force: true });
  });
  return {
    tmp,
    url: (name: string) => `file:${path.join(tmp, `${name}.db`)}`,
    async start(url: string, env: Record<string, string> = {}): Promise<App> {
      app = await startApp(url, { env });
      return app;
    },
  };
}
