/**
 * Vitest global setup for the integration suite: a fresh database (a temporary SQLite file, or
 * a clean schema of the PostgreSQL named by INTEGRATION_DATABASE_URL), migrated by the real
 * deploy, and the real production server (`npm start`'s lib/cli/serve.ts: Next.js plus the
 * ingest fast path) on a free port against it.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { serverArgs } from "../cli/start";
import { freePort } from "./ports";
import { keepAsTemplate, TEMPLATE_ENV } from "./migrated";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    databaseUrl: string;
  }
}

export const INTEGRATION_AUTH_SECRET = "integration-test-secret-0123456789abcdef";

async function resetPostgres(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("DROP SCHEMA IF EXISTS public CASCADE");
    await client.query("CREATE SCHEMA public");
  } finally {
    await client.end();
  }
}

async function waitForHealth(baseUrl: string, child: ChildProcess, output: () => string) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}):\n${output()}`);
    try {
      const res = await fetch(`${baseUrl}/api/health`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the server did not become healthy within 60 s:\n${output()}`);
}

/**
 * The suite's server and test processes sign no checkpoint by themselves after the first one
 * (which the first write still signs: there is none yet). By default one is signed after 10,000
 * records, right after whichever write crosses that, and its chain record would land inside
 * another test's "this request added nothing to the chain" window: the same kind of stray record
 * as the verifier checks that failed a fuzz family in CI (fuzz-verifiers.itest.ts). Checkpoints
 * are tested on servers of their own (checkpoints.itest.ts) and through `audit:checkpoint`.
 */
const NO_AUTOMATIC_CHECKPOINTS = { RECONCILE_CHECKPOINT_EVERY: "999999999,999h" };

export default async function setup(project: TestProject) {
  let tmp: string | null = null;
  let databaseUrl = process.env.INTEGRATION_DATABASE_URL;
  if (databaseUrl) {
    await resetPostgres(databaseUrl);
  } else {
    tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-itest-"));
    databaseUrl = `file:${path.join(tmp, "test.db")}`;
  }
  // The real deploy, as `npm run db:deploy` runs it.
  execFileSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "--conditions=react-server", "lib/cli/index.ts", "db:deploy"], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: "pipe",
  });
  // A copy of the migrated database, before the server first opens it: the tests' own new
  // databases are copies of it (lib/testing/migrated.ts).
  const template = await keepAsTemplate(databaseUrl);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  let log = "";
  // A keep-alive longer than any pause between requests: the test client reuses sockets, and a
  // socket the server closes during a slow step (a CLI run) would fail the next request.
  // The production server, as `npm start` runs it (lib/cli/serve.ts).
  // RECONCILE_TEST_SERVER_CPU_PROF=DIR: a CPU profile of the suite's server, written to DIR when it stops (where a lane's time goes).
  const profile = process.env.RECONCILE_TEST_SERVER_CPU_PROF;
  const child = spawn(process.execPath, [...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []), ...serverArgs()], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      AUTH_SECRET: INTEGRATION_AUTH_SECRET,
      NODE_ENV: "production",
      PORT: String(port),
      HOSTNAME: "127.0.0.1",
      KEEP_ALIVE_TIMEOUT_MS: "300000",
      // One JSON line per request would fill the kept log: warnings and errors only, unless asked.
      LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
      // The verifier example (lib/domain/fixtures/verifier-example.ts) sends {env.X_READ_TOKEN}.
      RECONCILE_VERIFIER_ENV: "X_READ_TOKEN",
      ...NO_AUTOMATIC_CHECKPOINTS,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  await waitForHealth(baseUrl, child, () => log);
  process.env.DATABASE_URL = databaseUrl;
  process.env[TEMPLATE_ENV] = template.value;
  Object.assign(process.env, NO_AUTOMATIC_CHECKPOINTS);
  project.provide("baseUrl", baseUrl);
  project.provide("databaseUrl", databaseUrl);

  return async () => {
    child.kill("SIGTERM");
    // A profile is written as the process exits: give it the time.
    if (profile) await new Promise((r) => child.once("exit", r));
    else await new Promise((r) => setTimeout(r, 300));
    if (child.exitCode === null) child.kill("SIGKILL");
    if (/\b5\d\d\b.*error|unhandled error/i.test(log)) console.error("server log:\n" + log);
    await template.drop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  };
}
