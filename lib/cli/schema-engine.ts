/**
 * Prisma migrations without Prisma's native schema engine.
 *
 * Why: `prisma migrate` needs a native schema-engine binary that Prisma downloads from its own
 * host at install time, which this project's network cannot reach. The same engine ships on npm
 * as WebAssembly (`@prisma/schema-engine-wasm`) and talks to the database through a Prisma driver
 * adapter, so we drive it ourselves:
 *
 * - `deployMigrations` is `prisma migrate deploy`: it applies pending migrations and records
 *   them in Prisma's standard `_prisma_migrations` table (same checksums), so the native CLI,
 *   where it exists, agrees with what was applied here.
 * - `createMigration` is the creating half of `prisma migrate dev`, run against throw-away
 *   databases: it never touches a real database.
 *
 * One folder of migrations per database (`prisma/migrations/sqlite`, `prisma/migrations/postgresql`)
 * because the SQLite schema `prisma/schema.prisma` has a PostgreSQL twin.
 *
 * This file holds the commands; schema-engine/engine.ts loads and runs the engine, and
 * schema-engine/adapters.ts makes the connections it works through.
 *
 * Set SCHEMA_ENGINE_DEBUG=1 to trace the engine's log and every call it makes on the adapter.
 */
import { writableHostUrl } from "@/lib/store/db/pg-probe";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { createScratchDatabase, dropDatabase, postgresConnections, sqliteConnections, sqliteFilePath, withDatabase, type Connections } from "./schema-engine/adapters";
import { filtersFor, layout, readMigrationsList, readSchema, root, withEngine, type Provider } from "./schema-engine/engine";
import { ensureWal } from "@/lib/store/db/sqlite-wal";

export type Log = (msg: string) => void;

/* -------------------------------------------------------------------------------------------- */
/* Public API                                                                                   */
/* -------------------------------------------------------------------------------------------- */

/**
 * Applies the pending migrations of the database that `databaseUrl` names (`file:` → SQLite,
 * `postgres://` / `postgresql://` → PostgreSQL). Safe to run repeatedly: applied migrations are
 * skipped. Throws when a migration fails, and refuses to go on while a failed one is recorded
 * (Prisma's P3009). Like `prisma migrate deploy`, it does not check applied migrations for edits.
 * Closes every connection it opens either way.
 */
export async function deployMigrations(
  databaseUrl: string,
  opts: { log?: Log } = {},
): Promise<{ applied: string[] }> {
  const log = opts.log ?? (() => {});
  const provider = providerOf(databaseUrl);
  const { migrations } = layout[provider];
  let connections: Connections;
  if (provider === "sqlite") {
    const file = sqliteFilePath(databaseUrl);
    mkdirSync(path.dirname(file), { recursive: true });
    log(`Deploying migrations to SQLite database ${file}`);
    connections = sqliteConnections(file);
  } else {
    // Several hosts (a failover pair): the migrations go to the writable one.
    const primary = await writableHostUrl(databaseUrl);
    log(`Deploying migrations to PostgreSQL database ${redactUrl(primary)}`);
    connections = postgresConnections(primary);
  }
  const migrationsList = await readMigrationsList(migrations);
  if (migrationsList.migrationDirectories.length === 0) {
    throw new Error(`No migrations found in ${path.relative(root, migrations)}`);
  }
  const { appliedMigrationNames } = await withEngine(connections, readSchema(provider), (engine) =>
    engine.applyMigrations({ migrationsList, filters: filtersFor(provider) }),
  );
  for (const name of appliedMigrationNames) log(`Applied migration ${name}`);
  // Left in WAL mode (the file keeps it), so that servers starting together on a new file
  // find nothing to switch (lib/store/db/sqlite-wal.ts says why that matters).
  if (provider === "sqlite") await ensureWal(sqliteFilePath(databaseUrl));
  return { applied: appliedMigrationNames };
}

/**
 * Creates migration `<YYYYMMDDHHMMSS>_<name>` in both migrations folders from the difference
 * between the existing migrations and the current schemas, like `prisma migrate dev --create-only`
 * but on throw-away databases: a temporary SQLite file, and for PostgreSQL temporary databases
 * created (and dropped) on the server `opts.postgresUrl` / `MIGRATE_POSTGRES_URL`, whose role
 * needs CREATEDB. Without a PostgreSQL server, PostgreSQL is skipped.
 *
 * Returns the created directories, or null per database where nothing changed or it was skipped.
 */
export async function createMigration(
  name: string,
  opts: { postgresUrl?: string; log?: Log } = {},
): Promise<{ sqlite: string | null; postgresql: string | null }> {
  const log = opts.log ?? (() => {});
  const slug = migrationSlug(name);

  // Generate both scripts before writing anything, so a failure on one database can't leave
  // the two folders out of step.
  const sqliteScript = await generateSqliteMigration(slug);
  const postgresUrl = opts.postgresUrl ?? process.env.MIGRATE_POSTGRES_URL;
  let postgresScript: GeneratedMigration | null = null;
  if (postgresUrl) {
    postgresScript = await generatePostgresMigration(slug, postgresUrl);
  } else {
    log(
      "PostgreSQL skipped: no server to generate against. Pass --postgres-url or set MIGRATE_POSTGRES_URL " +
        "(e.g. postgresql://USER:PASS@127.0.0.1:5432/DB; the role needs CREATEDB).",
    );
  }

  // One timestamp for both folders, so the twin migrations share a directory name.
  const directoryName = `${utcTimestamp(new Date())}_${slug}`;
  const write = (provider: Provider, generated: GeneratedMigration | null) => {
    if (!generated) return null;
    const dir = writeMigration(provider, directoryName, generated);
    log(`${provider}: created ${path.relative(root, dir)}`);
    return dir;
  };
  if (!sqliteScript) log("sqlite: the schema has no changes; no migration created.");
  if (postgresUrl && !postgresScript) log("postgresql: the schema has no changes; no migration created.");
  return { sqlite: write("sqlite", sqliteScript), postgresql: write("postgresql", postgresScript) };
}

/**
 * CLI glue:
 *   db:deploy                       apply pending migrations to DATABASE_URL (default file:./data/reconcile.db)
 *   db:migrate --name NAME [--postgres-url URL]
 *                                   create a migration for both databases (PostgreSQL needs a server:
 *                                   --postgres-url or MIGRATE_POSTGRES_URL)
 */
export async function runDbCommand(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const log: Log = (msg) => console.log(msg);
  if (command === "db:deploy") {
    const url = process.env.DATABASE_URL || "file:./data/reconcile.db";
    const { applied } = await deployMigrations(url, { log });
    console.log(applied.length === 0 ? "No pending migrations." : `${applied.length} migration(s) applied.`);
    return;
  }
  if (command === "db:migrate") {
    const name = flagValue(rest, "--name");
    if (!name) throw new Error("usage: db:migrate --name NAME [--postgres-url URL]");
    const created = await createMigration(name, { postgresUrl: flagValue(rest, "--postgres-url"), log });
    for (const [db, dir] of Object.entries(created)) {
      if (dir) console.log(`Created ${path.relative(process.cwd(), path.join(dir, "migration.sql"))} (${db})`);
    }
    if (!created.sqlite && !created.postgresql) console.log("No migration created.");
    return;
  }
  throw new Error(`unknown command ${command ?? "(none)"}: expected db:deploy or db:migrate --name NAME`);
}

/* -------------------------------------------------------------------------------------------- */
/* Creating migrations                                                                          */
/* -------------------------------------------------------------------------------------------- */

/** What the engine generated: the script, its file extension and the lockfile's provider. */
interface GeneratedMigration {
  script: string;
  extension: string;
  connectorType: string;
}

async function generateSqliteMigration(slug: string): Promise<GeneratedMigration | null> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-migrate-"));
  try {
    return await generateMigration("sqlite", sqliteConnections(path.join(tmp, "dev.db")), slug);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function generatePostgresMigration(slug: string, serverUrl: string): Promise<GeneratedMigration | null> {
  // The engine wants a "dev" database holding the migration history, plus shadow databases it
  // asks for itself (see postgresConnections). A fresh scratch database stands in for the dev one.
  const scratch = await createScratchDatabase(serverUrl, "reconcile_migrate");
  try {
    const connections = postgresConnections(withDatabase(serverUrl, scratch), serverUrl);
    return await generateMigration("postgresql", connections, slug);
  } finally {
    await dropDatabase(serverUrl, scratch);
  }
}

/**
 * The `migrate dev` recipe: bring the dev database up to the migration history
 * (applyMigrations), let the engine check that history replays cleanly on a shadow database
 * (devDiagnostic, which also caches the replayed schema), then diff it against the Prisma schema
 * (createMigration). The engine only returns the script: the files are ours to write.
 * Returns null when the schema has no changes.
 */
async function generateMigration(
  provider: Provider,
  connections: Connections,
  slug: string,
): Promise<GeneratedMigration | null> {
  const { migrations } = layout[provider];
  const schema = readSchema(provider);
  if (!schema) throw new Error(`Missing schema ${layout[provider].schema}`);
  const migrationsList = await readMigrationsList(migrations);

  const output = await withEngine(connections, schema, async (engine) => {
    await engine.applyMigrations({ migrationsList, filters: filtersFor(provider) });
    const { action } = await engine.devDiagnostic({ migrationsList, filters: filtersFor(provider) });
    if (action.tag === "reset") {
      throw new Error(
        `The ${provider} migration history does not replay cleanly (${action.reason}). ` +
          `Fix ${path.relative(root, migrations)} before creating a new migration.`,
      );
    }
    return engine.createMigration({
      draft: false,
      migrationName: slug,
      migrationsList,
      schema: { files: [schema] },
      filters: filtersFor(provider),
    });
  });
  if (output.migrationScript === null) return null;
  return { script: output.migrationScript, extension: output.extension, connectorType: output.connectorType };
}

/** Writes `<migrations>/<directoryName>/migration.sql` and the folder's lockfile; returns the directory. */
function writeMigration(provider: Provider, directoryName: string, generated: GeneratedMigration): string {
  const { migrations } = layout[provider];
  const dir = path.join(migrations, directoryName);
  if (existsSync(dir)) throw new Error(`The migration directory already exists: ${dir}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `migration.${generated.extension}`), generated.script);
  // Prisma's standard lockfile, byte for byte, so the native CLI accepts the folder.
  writeFileSync(
    path.join(migrations, "migration_lock.toml"),
    "# Please do not edit this file manually\n" +
      "# It should be added in your version-control system (e.g., Git)\n" +
      `provider = "${generated.connectorType}"\n`,
  );
  return dir;
}

/* -------------------------------------------------------------------------------------------- */
/* Small helpers                                                                                */
/* -------------------------------------------------------------------------------------------- */

function providerOf(url: string): Provider {
  if (url.startsWith("file:")) return "sqlite";
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) return "postgresql";
  throw new Error(`Unsupported database URL ${redactUrl(url)}: expected file:, postgres:// or postgresql://`);
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//***@");
  }
}

/** Migration names become lowercase words joined by underscores, as with Prisma's CLI. */
function migrationSlug(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 200);
  if (!slug) throw new Error(`Invalid migration name "${name}": use letters, digits and underscores`);
  return slug;
}

/** YYYYMMDDHHMMSS in UTC, as Prisma names migration directories. */
function utcTimestamp(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}

function flagValue(args: string[], flag: string): string | undefined {
  const i = args.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
  if (i === -1) return undefined;
  return args[i].includes("=") ? args[i].slice(flag.length + 1) : args[i + 1];
}

/* Run directly: `npx tsx lib/cli/schema-engine.ts db:deploy` ---------------------------------- */

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  runDbCommand(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
