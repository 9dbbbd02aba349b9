/**
 * Loading Prisma's WebAssembly schema engine and running it over a set of connections
 * (adapters.ts), plus what it reads: the schemas and migrations folders of each database.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { bindMigrationAwareSqlAdapterFactory, type ErrorRegistry } from "@prisma/driver-adapter-utils";
import * as engineRuntime from "@prisma/schema-engine-wasm/schema_engine_bg";
import type { MigrationList, SchemaEngine, SchemaFilter } from "@prisma/schema-engine-wasm/schema_engine_bg";
import type { Connections } from "./adapters";
import { debug } from "./debug";

export type Provider = "sqlite" | "postgresql";

export const root = path.resolve(import.meta.dirname, "../../..");

export const layout: Record<Provider, { schema: string; migrations: string }> = {
  sqlite: {
    schema: path.join(root, "prisma/schema.prisma"),
    migrations: path.join(root, "prisma/migrations/sqlite"),
  },
  postgresql: {
    schema: path.join(root, "prisma/postgresql/schema.prisma"),
    migrations: path.join(root, "prisma/migrations/postgresql"),
  },
};

/**
 * Tables that migrations create by hand and the schema language cannot model: the free-text
 * search index (an FTS5 virtual table and FTS5's shadow tables on SQLite, a table with a tsvector
 * column and one with the texts on PostgreSQL). Without this the engine's diff drops them in the next migration.
 */
export const EXTERNAL_TABLES = ["operation_search", ...["config", "content", "data", "docsize", "idx", "text"].map((s) => `operation_search_${s}`)];
/** The engine wants SQLite's tables by name and PostgreSQL's qualified by schema (the default, public). */
export const filtersFor = (provider: Provider): SchemaFilter => ({
  externalTables: provider === "postgresql" ? EXTERNAL_TABLES.map((t) => `public.${t}`) : EXTERNAL_TABLES,
  externalEnums: [],
});

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
export async function withEngine<T>(
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
export async function readMigrationsList(baseDir: string): Promise<MigrationList> {
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

export function readSchema(provider: Provider): { path: string; content: string } | undefined {
  const file = layout[provider].schema;
  return existsSync(file) ? { path: file, content: readFileSync(file, "utf8") } : undefined;
}
