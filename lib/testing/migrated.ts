/**
 * Migrated, empty databases for tests, cloned from one template per run instead of each running
 * the migrations again: the integration suite's global setup deploys its database with the real
 * deploy, then keeps a copy of it before its server first opens it (a SQLite file, or a PostgreSQL
 * `CREATE DATABASE … TEMPLATE`) and names it in RECONCILE_TEST_TEMPLATE; a test's new database
 * is a copy of that (the same bytes the deploy wrote: the deploy itself is still run, and tested,
 * once per run and in the suites about it). Without a template, or for a database that exists
 * already, the real deploy runs as before.
 */
import { copyFileSync, existsSync, mkdirSync, statSync } from "node:fs";
import path from "node:path";
import { deployMigrations } from "@/lib/cli/schema-engine";
import { adminQuery } from "./drop-database";
import { timed } from "./phases";

export const TEMPLATE_ENV = "RECONCILE_TEST_TEMPLATE";

type Template = { kind: "sqlite"; file: string } | { kind: "postgres"; database: string };

/** The run's template, as RECONCILE_TEST_TEMPLATE names it (`sqlite:/path/file.db` or `postgres:name`). */
export function template(): Template | null {
  const v = process.env[TEMPLATE_ENV];
  if (v?.startsWith("sqlite:")) return { kind: "sqlite", file: v.slice("sqlite:".length) };
  if (v?.startsWith("postgres:") && /^\w+$/.test(v.slice("postgres:".length))) return { kind: "postgres", database: v.slice("postgres:".length) };
  return null;
}

/** The databases this process made migrated (cloned or deployed): a second deploy of one would find nothing to do. */
const migrated = new Set<string>();
export const isMigratedHere = (url: string) => migrated.has(url);

const sqliteFile = (url: string) => url.slice("file:".length);

/**
 * Makes the SQLite database `url` names migrated: a copy of the template when there is one and
 * the file does not exist yet, else the real deploy.
 */
export async function migrateSqlite(url: string): Promise<void> {
  const t = template();
  const file = sqliteFile(url);
  if (t?.kind === "sqlite" && !existsSync(file)) {
    await timed("database cloned from the template", async () => {
      mkdirSync(path.dirname(file), { recursive: true });
      copyFileSync(t.file, file);
    });
  } else {
    await timed("migrations deployed", () => deployMigrations(url));
  }
  migrated.add(url);
}

/**
 * Creates the PostgreSQL database `name` on the server `serverUrl` names, migrated: a copy of the
 * template when there is one, else created empty and deployed. Returns its URL.
 */
export async function createMigratedPostgres(serverUrl: string, name: string): Promise<string> {
  const t = template();
  const target = new URL(serverUrl);
  target.pathname = `/${name}`;
  const url = target.toString();
  if (t?.kind === "postgres") {
    await timed("database cloned from the template", () => adminQuery(serverUrl, `CREATE DATABASE ${name} TEMPLATE ${t.database}`));
  } else {
    await timed("database created", () => adminQuery(serverUrl, `CREATE DATABASE ${name}`));
    await timed("migrations deployed", () => deployMigrations(url));
  }
  migrated.add(url);
  return url;
}

/**
 * Keeps the just-deployed database `url` as the run's template (before any server opens it) and
 * returns the value for RECONCILE_TEST_TEMPLATE and how to drop the copy.
 */
export async function keepAsTemplate(url: string): Promise<{ value: string; drop: () => Promise<void> }> {
  if (url.startsWith("file:")) {
    const file = sqliteFile(url);
    const copy = path.join(path.dirname(file), "template.db");
    // The deploy leaves the file in WAL mode with everything checkpointed: the main file is the database.
    if (existsSync(`${file}-wal`) && statSync(`${file}-wal`).size > 0) throw new Error(`${file}-wal is not empty after the deploy: the template would miss its pages`);
    copyFileSync(file, copy);
    return { value: `sqlite:${copy}`, drop: async () => {} };
  }
  const source = new URL(url);
  const name = `${source.pathname.slice(1)}_template`.replace(/\W/g, "_").toLowerCase();
  const { dropTestDatabase } = await import("./drop-database");
  await dropTestDatabase(url, name);
  await adminQuery(url, `CREATE DATABASE ${name} TEMPLATE ${source.pathname.slice(1)}`);
  return { value: `postgres:${name}`, drop: () => dropTestDatabase(url, name) };
}
