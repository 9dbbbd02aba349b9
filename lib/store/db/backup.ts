import "server-only";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { pgClient } from "./pg-failover";
import { providerOf } from "./database";
import { withoutSchema } from "./pg-hosts";

/**
 * Backups and restores of the whole database (docs/DEPLOY.md, "Backups"), while the server runs.
 *
 * SQLite: the online backup API (better-sqlite3's `backup`, SQLite's sqlite3_backup_*): a copy
 * of one consistent moment, taken page by page beside the running server (a write during the
 * copy restarts it from that page on, so it always ends on one state). PostgreSQL: `pg_dump
 * --format=custom`, one snapshot transaction (REPEATABLE READ), restored with `pg_restore`. Either
 * way the copy is written to a temporary name and renamed when complete, so a partial file is
 * never taken for a backup. What it holds is stated: its records and the last seq among them.
 */

/** What a backup holds: its chain records and the last seq among them (every chain shares one seq). */
export type BackupSummary = { file: string; bytes: number; records: number; head: number | null };
export type Progress = (done: number, total: number) => void;

/** What a database holds, the same query on both. */
const SUMMARY = "SELECT COUNT(*) AS n, MAX(seq) AS head FROM chain_records";
const summaryOf = (r: { n: number | string; head: number | string | null }) => ({ records: Number(r.n), head: r.head === null ? null : Number(r.head) });

const sqlitePath = (url: string) => url.replace(/^file:/, "").replace(/\?.*$/, "");

async function sqliteSummary(file: string): Promise<Pick<BackupSummary, "records" | "head">> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return summaryOf(db.prepare(SUMMARY).get() as { n: number; head: number | null });
  } finally {
    db.close();
  }
}

async function pgSummary(url: string): Promise<Pick<BackupSummary, "records" | "head">> {
  const client = pgClient(url);
  await client.connect();
  try {
    return summaryOf((await client.query<{ n: string; head: string | null }>(SUMMARY)).rows[0]);
  } finally {
    await client.end();
  }
}

/** Runs a PostgreSQL client program, failing with its own words. */
function run(program: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.on("error", (e) => reject(new Error(`${program} could not be run (${e.message}): install the PostgreSQL client programs`)));
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${program} failed (exit ${code}): ${err.trim().slice(0, 2000)}`))));
  });
}

/** A connection string pg_dump and pg_restore take (libpq's own URI: a project's `schema` goes in `--schema` instead). */
const libpqUrl = (url: string) => withoutSchema(url).url.replace(/^postgres:\/\//, "postgresql://");

/** A project's schema (lib/domain/projects.ts) as pg_dump's option: that project alone. */
const schemaArgs = (url: string) => {
  const { schema } = withoutSchema(url);
  return schema ? [`--schema=${schema}`] : [];
};

/** Backs up the database `url` names into `out` (refused if `out` exists). */
export async function backupDatabase(url: string, out: string, progress?: Progress): Promise<BackupSummary> {
  if (existsSync(out)) throw new Error(`${out} exists: a backup is never written over a file`);
  mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  const partial = `${out}.partial-${process.pid}`;
  try {
    if (providerOf(url) === "sqlite") {
      const db = new Database(sqlitePath(url), { fileMustExist: true });
      try {
        await db.backup(partial, { progress: ({ totalPages, remainingPages }) => (progress?.(totalPages - remainingPages, totalPages), 256) });
      } finally {
        db.close();
      }
      // One self-contained file: out of WAL mode, so that opening it leaves no -wal or -shm beside it.
      const copy = new Database(partial);
      try {
        copy.pragma("journal_mode = DELETE");
      } finally {
        copy.close();
      }
      const heads = await sqliteSummary(partial);
      renameSync(partial, out);
      return { file: out, bytes: statSync(out).size, ...heads };
    }
    // One snapshot for the dump and for what it is said to hold: this transaction exports it,
    // reads the heads in it, and stays open while pg_dump dumps the same snapshot.
    const client = pgClient(url);
    await client.connect();
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      const { rows } = await client.query<{ id: string }>("SELECT pg_export_snapshot() AS id");
      const held = summaryOf((await client.query<{ n: string; head: string | null }>(SUMMARY)).rows[0]);
      await run("pg_dump", ["--format=custom", "--no-owner", "--no-privileges", `--snapshot=${rows[0].id}`, `--file=${partial}`, ...schemaArgs(url), libpqUrl(url)]);
      await client.query("COMMIT");
      renameSync(partial, out);
      return { file: out, bytes: statSync(out).size, ...held };
    } finally {
      await client.end();
    }
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  }
}

/** Whether the database `url` names holds any chain record (a restore never writes over one that does, unless forced). */
/**
 * Whether a database holds anything a restore would lose: chain records, or (the instance's
 * database) users or the instance's security trail, which a server with people but no operation
 * yet already has.
 */
const HELD = ["chain_records", "instance_events", "users"];

async function holdsRecords(url: string): Promise<boolean> {
  if (providerOf(url) === "sqlite") {
    const file = sqlitePath(url);
    if (!existsSync(file)) return false;
    const db = new Database(file, { readonly: true });
    try {
      for (const name of HELD) {
        const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(name);
        if (table && db.prepare(`SELECT 1 FROM ${name} LIMIT 1`).get()) return true;
      }
      return false;
    } finally {
      db.close();
    }
  }
  const client = pgClient(url);
  await client.connect();
  try {
    for (const name of HELD) {
      const { rows } = await client.query("SELECT to_regclass(current_schema() || '.' || $1) IS NOT NULL AS present", [name]);
      if (rows[0].present && (await client.query(`SELECT 1 FROM ${name} LIMIT 1`)).rows.length > 0) return true;
    }
    return false;
  } finally {
    await client.end();
  }
}

/**
 * Restores the backup `from` into the database `url` names: a SQLite file is copied with the
 * backup API into a new file (one holding records is replaced only with `force`); a dump is
 * loaded with pg_restore into a database without records (`force`: one with records), its
 * objects dropped first.
 */
export async function restoreDatabase(from: string, url: string, opts: { force?: boolean } = {}): Promise<Pick<BackupSummary, "records" | "head">> {
  if (!existsSync(from)) throw new Error(`${from} does not exist`);
  if (!opts.force && (await holdsRecords(url))) throw new Error("the database to restore into already holds records or users: restore into a new one, or pass --force to replace it");
  if (providerOf(url) === "sqlite") {
    const target = sqlitePath(url);
    mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
    const partial = `${target}.partial-${process.pid}`;
    const source = new Database(from, { readonly: true, fileMustExist: true });
    try {
      const ok = source.pragma("integrity_check", { simple: true });
      if (ok !== "ok") throw new Error(`${from} is not a sound SQLite database: ${String(ok)}`);
      await source.backup(partial);
    } catch (e) {
      rmSync(partial, { force: true });
      throw e;
    } finally {
      source.close();
    }
    for (const suffix of ["-wal", "-shm"]) rmSync(`${target}${suffix}`, { force: true });
    renameSync(partial, target);
    return sqliteSummary(target);
  }
  // Into a database without records (new, or migrated and never used): whatever schema it has is
  // replaced by the backup's (--clean), in one transaction with the data.
  await run("pg_restore", ["--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction", "--clean", "--if-exists", `--dbname=${libpqUrl(url)}`, from]);
  return pgSummary(url);
}
