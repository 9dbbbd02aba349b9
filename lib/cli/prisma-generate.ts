/**
 * Generates both Prisma clients offline, and keeps the PostgreSQL twin schema in step with the
 * canonical SQLite one. `--check` only verifies the twin (CI), exiting 1 when it is stale.
 *
 * Why: Prisma's CLI insists on a native schema engine it downloads at install time, which this
 * network cannot reach. `generate` only checks that the file exists, so a placeholder serves.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");
const canonicalPath = path.join(root, "prisma/schema.prisma");
const twinPath = path.join(root, "prisma/postgresql/schema.prisma");

export function postgresTwin(canonical: string): string {
  const out = canonical
    .replace(/provider\s*=\s*"sqlite"/, 'provider = "postgresql"')
    .replace('output       = "../lib/store/generated/sqlite"', 'output       = "../../lib/store/generated/pg"')
    .replace(
      /^\/\/ The canonical schema[^\n]*\n(\/\/[^\n]*\n)*/,
      "// GENERATED from prisma/schema.prisma by `npm run db:generate`: edit that file, not this one.\n",
    );
  if (!out.includes('provider = "postgresql"') || !out.includes("generated/pg")) {
    throw new Error("prisma-generate: could not derive the PostgreSQL twin; did the generator block change?");
  }
  return out;
}

function main() {
  const canonical = readFileSync(canonicalPath, "utf8");
  const twin = postgresTwin(canonical);
  const current = existsSync(twinPath) ? readFileSync(twinPath, "utf8") : null;
  if (process.argv.includes("--check")) {
    if (current !== twin) {
      console.error("prisma/postgresql/schema.prisma is stale: run `npm run db:generate` and commit it.");
      process.exit(1);
    }
    console.log("prisma/postgresql/schema.prisma is in step with prisma/schema.prisma");
    return;
  }
  if (current !== twin) {
    mkdirSync(path.dirname(twinPath), { recursive: true });
    writeFileSync(twinPath, twin);
  }
  const env = { ...process.env };
  if (!env.PRISMA_SCHEMA_ENGINE_BINARY) {
    const placeholder = path.join(root, "node_modules/.cache/reconcile/schema-engine-placeholder");
    mkdirSync(path.dirname(placeholder), { recursive: true });
    writeFileSync(placeholder, "#!/bin/sh\necho 'schema engine placeholder: use npm run db:deploy / db:migrate' >&2\nexit 1\n");
    chmodSync(placeholder, 0o755);
    env.PRISMA_SCHEMA_ENGINE_BINARY = placeholder;
  }
  env.PRISMA_HIDE_UPDATE_MESSAGE = "1";
  const prisma = path.join(root, "node_modules/prisma/build/index.js");
  for (const schema of [canonicalPath, twinPath]) {
    execFileSync(process.execPath, [prisma, "generate", "--schema", schema, "--no-hints"], { cwd: root, env, stdio: "inherit" });
  }
}

main();
