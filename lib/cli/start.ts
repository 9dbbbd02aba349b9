/**
 * `npm start`: applies pending migrations, makes sure an AUTH_SECRET exists (created once and
 * kept under ./data when unset), then runs the production server (lib/cli/serve.ts: Next.js
 * plus the ingest fast path) in this process's place.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { deployMigrations } from "./schema-engine";

export const DEFAULT_DATABASE_URL = "file:./data/reconcile.db";

export function ensureAuthSecret(dataDir = "data"): string {
  if (process.env.AUTH_SECRET) return process.env.AUTH_SECRET;
  const file = path.join(dataDir, "auth-secret");
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString("base64url") + "\n", { mode: 0o600 });
  }
  return readFileSync(file, "utf8").trim();
}

export async function prepare(): Promise<NodeJS.ProcessEnv> {
  const url = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const { applied } = await deployMigrations(url);
  if (applied.length) console.log(`applied ${applied.length} migration(s): ${applied.join(", ")}`);
  return { ...process.env, DATABASE_URL: url, AUTH_SECRET: ensureAuthSecret() };
}

/**
 * The production server's command line: node + these arguments (lib/cli/serve.ts through tsx's
 * loader, in this one process, so that a signal sent to it reaches the server itself).
 */
export function serverArgs(): string[] {
  return [...heapArgs(), "--import", "tsx", path.resolve("lib/cli/serve.ts")];
}

/**
 * A young generation of 128 MiB a half instead of V8's 16: ingest makes short-lived objects
 * (parsed bodies, canonical texts, rows) fast enough that the small one is collected hundreds
 * of times a second and promotes what is still in flight. A CPU profile of bench:ingest on
 * PostgreSQL had the server's garbage collector at 16 % of its busy time (docs/BENCHMARKS.md,
 * "Fewer round trips, a larger young generation"). 128 instead of 64 took the server's CPU a
 * receipt down ~10 % more (session 16, "Where the CPU goes"). Costs up to ~224 MiB of memory
 * more at peak (two 128 MiB halves for two of 16); the young generation grows to it only under
 * load. A `--max-semi-space-size` of one's own in NODE_OPTIONS is kept instead.
 */
export function heapArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  return /--max-semi-space-size/.test(env.NODE_OPTIONS ?? "") ? [] : ["--max-semi-space-size=128"];
}

export function startServer(env: NodeJS.ProcessEnv, port = env.PORT || "3000") {
  const child = spawn(process.execPath, serverArgs(), { env: { ...env, PORT: String(port) }, stdio: "inherit" });
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => child.kill(sig));
  child.on("exit", (code) => process.exit(code ?? 0));
  return child;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  prepare().then(
    (env) => startServer(env),
    (e) => {
      console.error(`could not start: ${e instanceof Error ? e.message : e}`);
      process.exit(1);
    },
  );
}
