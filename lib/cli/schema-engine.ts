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
 * Set SCHEMA_ENGINE_DEBUG=1 to trace the engine's log and every call it makes on the adapter.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  bindMigrationAwareSqlAdapterFactory,
  DriverAdapterError,
  type ErrorRegistry,
  type IsolationLevel,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQuery,
  type SqlResultSet,
  type Transaction,
} from "@prisma/driver-adapter-utils";
import * as engineRuntime from "@prisma/schema-engine-wasm/schema_engine_bg";
import type { MigrationList, SchemaEngine, SchemaFilter } from "@prisma/schema-engine-wasm/schema_engine_bg";
import pg from "pg";

export type Log = (msg: string) => void;
type Provider = "sqlite" | "postgresql";

const root = path.resolve(import.meta.dirname, "../..");

const layout: Record<Provider, { schema: string; migrations: string }> = {
  sqlite: {
    schema: path.join(root, "prisma/schema.prisma"),
    migrations: path.join(root, "prisma/migrations/sqlite"),
  },
  postgresql: {
    schema: path.join(root, "prisma/postgresql/schema.prisma"),
    migrations: path.join(root, "prisma/migrations/postgresql"),
  },
};

/** No tables or enums are managed outside Prisma here. */
const noFilters: SchemaFilter = { externalTables: [], externalEnums: [] };

const debugEnabled = process.env.SCHEMA_ENGINE_DEBUG === "1";
function debug(msg: string): void {
  if (debugEnabled) process.stderr.write(`[schema-engine] ${msg}\n`);
}

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
    log(`Deploying migrations to PostgreSQL database ${redactUrl(databaseUrl)}`);
    connections = postgresConnections(databaseUrl);
  }
  const migrationsList = await readMigrationsList(migrations);
  if (migrationsList.migrationDirectories.length === 0) {
    throw new Error(`No migrations found in ${path.relative(root, migrations)}`);
  }
  const { appliedMigrationNames } = await withEngine(connections, readSchema(provider), (engine) =>
    engine.applyMigrations({ migrationsList, filters: noFilters }),
  );
  for (const name of appliedMigrationNames) log(`Applied migration ${name}`);
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
    await engine.applyMigrations({ migrationsList, filters: noFilters });
    const { action } = await engine.devDiagnostic({ migrationsList, filters: noFilters });
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
      filters: noFilters,
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
/* The engine                                                                                   */
/* -------------------------------------------------------------------------------------------- */

let runtimeReady: Promise<typeof engineRuntime> | undefined;

/**
 * Instantiates the WebAssembly module once per process. The package's main entry imports the
 * `.wasm` file as an ES module, which Node doesn't support without a flag, so we do the
 * wasm-bindgen wiring it would have done.
 */
function loadRuntime(): Promise<typeof engineRuntime> {
  runtimeReady ??= (async () => {
    const glue = fileURLToPath(import.meta.resolve("@prisma/schema-engine-wasm/schema_engine_bg"));
    const bytes = await readFile(path.join(path.dirname(glue), "schema_engine_bg.wasm"));
    // The engine arms timers (a 10 s one on every PostgreSQL run) and never clears them: it
    // imports no clearTimeout. Left as they are, they keep a finished CLI process alive for up
    // to 10 s, so they are unref'd; withEngine keeps the process alive while the engine works.
    const imports: WebAssembly.ModuleImports = { ...engineRuntime };
    for (const name of Object.keys(imports).filter((key) => key.startsWith("__wbg_setTimeout_"))) {
      imports[name] = (callback: () => void, ms: number) => setTimeout(callback, ms >>> 0).unref();
    }
    const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": imports });
    const exports = instance.exports as unknown as { __wbindgen_start(): void };
    engineRuntime.__wbg_set_wasm(exports);
    exports.__wbindgen_start();
    return engineRuntime;
  })();
  return runtimeReady;
}

/**
 * Runs `fn` with an engine connected through `connections`, then frees the engine and closes
 * every connection, whether `fn` succeeded or not.
 */
async function withEngine<T>(
  connections: Connections,
  schema: { path: string; content: string } | undefined,
  fn: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  const runtime = await loadRuntime();
  // The binder turns thrown JS errors into results the engine understands; errors it can't map
  // reach us only as "External error id#N", with the original kept in its registry.
  const factory = bindMigrationAwareSqlAdapterFactory(connections.factory);
  // The engine's own timers are unref'd (see loadRuntime); should it ever wait on one alone,
  // this keeps the process from exiting under it.
  const keepAlive = setInterval(() => {}, 60_000);
  let engine: SchemaEngine | undefined;
  let outcome: { ok: true; value: T } | { ok: false; error: Error };
  try {
    engine = await runtime.SchemaEngine.new(
      { datamodels: schema ? [[schema.path, schema.content]] : undefined },
      (line: string) => debug(`engine: ${line}`),
      factory,
    );
    outcome = { ok: true, value: await fn(engine) };
  } catch (error) {
    outcome = { ok: false, error: readableError(error, factory.errorRegistry) };
  }
  engine?.free();
  try {
    await connections.close();
  } catch (closeError) {
    // Failing to close matters only when nothing failed before: don't mask the real error.
    if (outcome.ok) throw closeError;
    debug(`while closing after an error: ${String(closeError)}`);
  } finally {
    clearInterval(keepAlive);
  }
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/** Replaces each `External error id#N` with the message of the JS error it stands for. */
function readableError(error: unknown, registry: ErrorRegistry): Error {
  const message = error instanceof Error ? error.message : String(error);
  let cause: unknown;
  const readable = message.replace(/External error id#(\d+)/g, (whole, id: string) => {
    const record = registry.consumeError(Number(id));
    if (!record) return whole;
    cause ??= record.error;
    return record.error instanceof Error ? record.error.message : String(record.error);
  });
  if (readable === message && error instanceof Error) return error;
  const rewritten = new Error(readable, { cause: cause ?? error });
  // Keep the engine's Prisma error code (e.g. P3009) for callers that branch on it.
  const code = (error as { code?: unknown } | null)?.code;
  return code === undefined ? rewritten : Object.assign(rewritten, { code });
}

/** Reads a migrations folder the way Prisma's CLI does (sorted directories, missing files as errors). */
async function readMigrationsList(baseDir: string): Promise<MigrationList> {
  const lockfilePath = "migration_lock.toml";
  const lockfileContent = existsSync(path.join(baseDir, lockfilePath))
    ? readFileSync(path.join(baseDir, lockfilePath), "utf8")
    : null;
  const entries = existsSync(baseDir) ? readdirSync(baseDir, { withFileTypes: true }) : [];
  const migrationDirectories = await Promise.all(
    entries
      .filter((entry) => entry.isDirectory())
      .map(async (entry) => {
        const file = "migration.sql";
        const content = await readFile(path.join(baseDir, entry.name, file), "utf8").then(
          (value) => ({ tag: "ok" as const, value }),
          (error: Error) => ({ tag: "error" as const, value: error.message }),
        );
        return { path: entry.name, migrationFile: { path: file, content } };
      }),
  );
  migrationDirectories.sort((a, b) => a.path.localeCompare(b.path));
  return {
    baseDir,
    lockfile: { path: lockfilePath, content: lockfileContent },
    shadowDbInitScript: "",
    migrationDirectories,
  };
}

function readSchema(provider: Provider): { path: string; content: string } | undefined {
  const file = layout[provider].schema;
  return existsSync(file) ? { path: file, content: readFileSync(file, "utf8") } : undefined;
}

/* -------------------------------------------------------------------------------------------- */
/* Connections                                                                                  */
/* -------------------------------------------------------------------------------------------- */

/** An adapter factory for the engine, and a way to close everything it handed out. */
interface Connections {
  factory: SqlMigrationAwareDriverAdapterFactory;
  close(): Promise<void>;
}

/** Hands out adapters and remembers them, so that `close` can dispose whatever the engine didn't. */
function trackingConnections(
  provider: "sqlite" | "postgres",
  adapterName: string,
  connect: () => Promise<SqlDriverAdapter>,
  connectToShadowDb: () => Promise<SqlDriverAdapter>,
): Connections {
  const open = new Set<SqlDriverAdapter>();
  const track = async (make: () => Promise<SqlDriverAdapter>) => {
    const adapter = await make();
    const dispose = adapter.dispose.bind(adapter);
    // Once only: the engine may dispose an adapter itself, and closing a pg pool twice throws.
    let disposed: Promise<void> | undefined;
    adapter.dispose = () => {
      open.delete(adapter);
      return (disposed ??= dispose());
    };
    open.add(adapter);
    return adapter;
  };
  return {
    factory: {
      provider,
      adapterName,
      connect: () => track(connect),
      connectToShadowDb: () => track(connectToShadowDb),
    },
    async close() {
      const results = await Promise.allSettled([...open].map((adapter) => adapter.dispose()));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) throw failed.reason;
    },
  };
}

/**
 * Delegates to an official adapter; subclasses patch what the engine needs and the adapter
 * doesn't do. (A class rather than a Proxy so the patched surface is explicit.)
 */
class DelegatingAdapter implements SqlDriverAdapter {
  readonly provider: SqlDriverAdapter["provider"];
  readonly adapterName: string;
  constructor(protected readonly inner: SqlDriverAdapter) {
    this.provider = inner.provider;
    this.adapterName = inner.adapterName;
  }
  queryRaw(query: SqlQuery): Promise<SqlResultSet> {
    debug(`queryRaw ${oneLine(query.sql)}`);
    return this.inner.queryRaw(query);
  }
  executeRaw(query: SqlQuery): Promise<number> {
    debug(`executeRaw ${oneLine(query.sql)}`);
    return this.inner.executeRaw(query);
  }
  executeScript(script: string): Promise<void> {
    debug(`executeScript ${oneLine(script)}`);
    return this.inner.executeScript(script);
  }
  startTransaction(isolationLevel?: IsolationLevel): Promise<Transaction> {
    debug(`startTransaction ${isolationLevel ?? ""}`);
    return this.inner.startTransaction(isolationLevel);
  }
  getConnectionInfo() {
    return this.inner.getConnectionInfo?.() ?? { supportsRelationJoins: false };
  }
  dispose(): Promise<void> {
    debug("dispose");
    return this.inner.dispose();
  }
}

/* SQLite ------------------------------------------------------------------------------------- */

class SqliteMigrationAdapter extends DelegatingAdapter {
  /**
   * The engine replays migrations on the shadow database with executeRaw, which better-sqlite3
   * runs as one prepared statement and refuses when the script has several (our migrations do).
   * Those scripts have no parameters, so running them with `exec` instead is equivalent. The
   * refusal happens in `prepare`, before anything ran, so the retry can't run a statement twice.
   */
  override async executeRaw(query: SqlQuery): Promise<number> {
    try {
      return await super.executeRaw(query);
    } catch (error) {
      if (query.args.length === 0 && error instanceof RangeError && /more than one statement/.test(error.message)) {
        debug("executeRaw: multi-statement script, running it with executeScript");
        await this.inner.executeScript(query.sql);
        return 0;
      }
      throw error;
    }
  }
}

function sqliteConnections(file: string): Connections {
  // The shadow database is the adapter's default, an in-memory one: nothing to clean up.
  const factory = new PrismaBetterSqlite3({ url: file });
  return trackingConnections(
    "sqlite",
    factory.adapterName,
    async () => new SqliteMigrationAdapter(await factory.connect()),
    async () => new SqliteMigrationAdapter(await factory.connectToShadowDb()),
  );
}

/** `file:./x.db`, `file:x.db`, `file:/abs/x.db` or `file:///abs/x.db`, relative to the cwd like Prisma. */
function sqliteFilePath(url: string): string {
  const withoutQuery = url.replace(/\?.*$/, "");
  const file = withoutQuery.startsWith("file://")
    ? fileURLToPath(withoutQuery)
    : decodeURIComponent(withoutQuery.slice("file:".length));
  if (!file) throw new Error(`Invalid SQLite URL ${url}: expected file:./path/to.db`);
  return path.resolve(process.cwd(), file);
}

/* PostgreSQL --------------------------------------------------------------------------------- */

class PgMigrationAdapter extends DelegatingAdapter {
  constructor(
    inner: SqlDriverAdapter,
    private readonly pool: pg.Pool,
    private readonly afterDispose?: () => Promise<void>,
  ) {
    super(inner);
  }

  /** The pool is ours (adapter-pg got it as an external pool), so ending it is ours too. */
  override async dispose(): Promise<void> {
    await super.dispose();
    await this.pool.end();
    await this.afterDispose?.();
  }

  /**
   * adapter-pg splits scripts on `;`, which cuts function bodies (our append-only trigger
   * function) into pieces. Sent whole instead, over the simple query protocol, PostgreSQL runs
   * a multi-statement script as one implicit transaction: a failing migration leaves nothing
   * half-applied, which is also how Prisma's native engine sends it.
   */
  override async executeScript(script: string): Promise<void> {
    debug(`executeScript (whole) ${oneLine(script)}`);
    try {
      await this.pool.query(script);
    } catch (error) {
      throw asDriverAdapterError(error);
    }
  }
}

/** Reports pg errors to the engine as PostgreSQL errors (code, message, detail), like adapter-pg does. */
function asDriverAdapterError(error: unknown): unknown {
  if (error instanceof pg.DatabaseError && error.code) {
    return new DriverAdapterError({
      kind: "postgres",
      code: error.code,
      severity: error.severity ?? "ERROR",
      message: error.message,
      detail: error.detail,
      column: error.column,
      hint: error.hint,
    });
  }
  return error;
}

/**
 * A pg client that reports PostgreSQL's internal `"char"` type (OID 18, e.g. pg_constraint.contype)
 * as `text`. The engine reads such catalog columns while describing a schema, and adapter-pg
 * rejects OID 18 as an unsupported native type; its values are one-character strings, so text
 * is exact. Used only for the engine's own pools.
 */
class CatalogFriendlyClient extends pg.Client {
  _handleRowDescription(msg: { fields: { dataTypeID: number }[] }): void {
    for (const field of msg.fields) if (field.dataTypeID === 18) field.dataTypeID = 25;
    (pg.Client.prototype as unknown as { _handleRowDescription(m: unknown): void })._handleRowDescription.call(
      this,
      msg,
    );
  }
}

function enginePool(url: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    Client: CatalogFriendlyClient,
    // The engine takes a session-level advisory lock (so concurrent deploys wait for each other)
    // on whichever pooled connection runs it. Closing idle connections could silently release it
    // mid-run, so connections live until the pool ends.
    idleTimeoutMillis: 0,
  });
  // An idle client's error (e.g. the server restarting) must not crash the process; the next
  // query reports it.
  pool.on("error", (error) => debug(`pool error: ${error.message}`));
  return pool;
}

/**
 * Connections to the PostgreSQL database `url`. When the engine needs a shadow database (only
 * when creating migrations), we create one on `shadowServerUrl` and drop it on dispose: adapter-pg's
 * own connectToShadowDb drops it while its pool is still connected, which PostgreSQL refuses.
 */
function postgresConnections(url: string, shadowServerUrl?: string): Connections {
  // Prisma's `?schema=` would need search_path handling too; this project lives in `public`.
  const schema = new URL(url).searchParams.get("schema");
  if (schema && schema !== "public") {
    throw new Error(`Unsupported ?schema=${schema}: migrations here target the public schema only`);
  }
  const connectTo = async (databaseUrl: string, afterDispose?: () => Promise<void>) => {
    const pool = enginePool(databaseUrl);
    return new PgMigrationAdapter(await new PrismaPg(pool).connect(), pool, afterDispose);
  };
  return trackingConnections(
    "postgres",
    "@prisma/adapter-pg",
    () => connectTo(url),
    async () => {
      if (!shadowServerUrl) throw new Error("This operation needs a shadow database, which deploy never does.");
      const shadow = await createScratchDatabase(shadowServerUrl, "reconcile_shadow");
      return connectTo(withDatabase(shadowServerUrl, shadow), () => dropDatabase(shadowServerUrl, shadow));
    },
  );
}

/** Creates an empty database with a unique name on the server of `serverUrl` and returns its name. */
async function createScratchDatabase(serverUrl: string, prefix: string): Promise<string> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  await withAdminClient(serverUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  debug(`created database ${name}`);
  return name;
}

async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  // FORCE (PostgreSQL 13+) ends stray sessions, so a leaked connection can't leave the database behind.
  await withAdminClient(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  debug(`dropped database ${name}`);
}

async function withAdminClient<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The same server and credentials, another database. */
function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
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

function oneLine(sql: string): string {
  const flat = sql.replace(/\s+/g, " ").trim();
  return flat.length > 160 ? `${flat.slice(0, 160)}…` : flat;
}

/* Run directly: `npx tsx lib/cli/schema-engine.ts db:deploy` ---------------------------------- */

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  runDbCommand(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
