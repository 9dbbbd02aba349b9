/**
 * The connections the schema engine works through: Prisma's official driver adapters, patched
 * where the engine needs something they do not do (multi-statement scripts on SQLite, whole
 * scripts and catalog types on PostgreSQL), and the scratch and shadow databases it asks for.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  DriverAdapterError,
  type IsolationLevel,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQuery,
  type SqlResultSet,
  type Transaction,
} from "@prisma/driver-adapter-utils";
import pg from "pg";
import { withoutSchema } from "@/lib/store/db/pg-hosts";
import { debug, oneLine } from "./debug";

/** An adapter factory for the engine, and a way to close everything it handed out. */
export interface Connections {
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

export function sqliteConnections(file: string): Connections {
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
export function sqliteFilePath(url: string): string {
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

function enginePool(url: string, schema: string | null = null): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
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
export function postgresConnections(url: string, shadowServerUrl?: string): Connections {
  // A project's own schema (`?schema=project_…`, lib/domain/projects.ts): made first if missing, then
  // every engine connection works in it (search_path), and the engine keeps its own migrations
  // table there too (the adapter's schema), so each project's migrations are recorded apart.
  const { url: bare, schema } = withoutSchema(url);
  const connectTo = async (databaseUrl: string, afterDispose?: () => Promise<void>, inSchema: string | null = null) => {
    if (inSchema) await withAdminClient(databaseUrl, (client) => client.query(`CREATE SCHEMA IF NOT EXISTS "${inSchema}"`));
    const pool = enginePool(databaseUrl, inSchema);
    return new PgMigrationAdapter(await new PrismaPg(pool, inSchema ? { schema: inSchema } : undefined).connect(), pool, afterDispose);
  };
  return trackingConnections(
    "postgres",
    "@prisma/adapter-pg",
    () => connectTo(bare, undefined, schema),
    async () => {
      if (!shadowServerUrl) throw new Error("This operation needs a shadow database, which deploy never does.");
      const shadow = await createScratchDatabase(shadowServerUrl, "reconcile_shadow");
      return connectTo(withDatabase(shadowServerUrl, shadow), () => dropDatabase(shadowServerUrl, shadow));
    },
  );
}

/** Creates an empty database with a unique name on the server of `serverUrl` and returns its name. */
export async function createScratchDatabase(serverUrl: string, prefix: string): Promise<string> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  await withAdminClient(serverUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  debug(`created database ${name}`);
  return name;
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
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
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
