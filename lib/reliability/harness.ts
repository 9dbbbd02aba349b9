/**
 * What the reliability harnesses share: a migrated database with a user and tokens, the real
 * production server (`npm start`'s lib/cli/serve.ts, from the current build) started and
 * killed on demand, and latency percentiles. The harnesses run in tests (short) and in
 * `npm run soak:*` (long).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { adminQuery, dropTestDatabase } from "@/lib/testing/drop-database";
export { mulberry32 as seeded } from "@/lib/domain/demo-data";
import { deployMigrations } from "@/lib/cli/schema-engine";
import { isMigratedHere, migrateSqlite } from "@/lib/testing/migrated";
import { recordPhase, timed } from "@/lib/testing/phases";
import { serverArgs } from "@/lib/cli/start";
import { createApiToken } from "@/lib/store/people/api-tokens";
import { disconnect } from "@/lib/store/db/db";
import { freePort } from "@/lib/testing/ports";
import { createUser } from "@/lib/store/people/users";
import { recordChainCount } from "@/lib/store/chain/chain";

export const AUTH_SECRET = "reliability-secret-0123456789abcdef0123";

export type Tokens = { ingest: string; review: string; read: string; export: string };

/**
 * Migrates the database at `url` with the real deploy, and makes an admin with one token per
 * job, through the store's own use cases (`chains`: the database's hash chains, default
 * RECONCILE_CHAINS). Leaves this process disconnected.
 */
export async function prepareDatabase(url: string, tag = "reliability", opts: { chains?: number } = {}): Promise<{ tokens: Tokens; email: string; password: string }> {
  process.env.DATABASE_URL = url;
  // A database this process has just made migrated (freshDatabase) needs no second deploy; a new
  // SQLite file is a copy of the run's template when there is one (lib/testing/migrated.ts).
  if (!isMigratedHere(url)) {
    if (url.startsWith("file:")) await migrateSqlite(url);
    else await timed("migrations deployed", () => deployMigrations(url));
  }
  // The database's chain count is recorded now, as a server's first start does (the admin's
  // creation below appends to the instance's trail, not to a project's chain).
  const before = process.env.RECONCILE_CHAINS;
  if (opts.chains !== undefined) process.env.RECONCILE_CHAINS = String(opts.chains);
  try {
    await recordChainCount();
    return await makeAdmin(tag);
  } finally {
    if (before === undefined) delete process.env.RECONCILE_CHAINS;
    else process.env.RECONCILE_CHAINS = before;
  }
}

async function makeAdmin(tag: string): Promise<{ tokens: Tokens; email: string; password: string }> {
  const email = `${tag}-${process.pid}-${Date.now()}@reliability.test`;
  const password = "reliability-password";
  await createUser({ email, password, role: "admin", actor: "reliability", via: "cli" });
  const token = async (scopes: string[]) => (await createApiToken({ email, name: `${tag} ${scopes.join("+")}`, scopes, actor: "reliability" })).token;
  const tokens = { ingest: await token(["ingest", "verify", "read"]), review: await token(["review", "read"]), read: await token(["read"]), export: await token(["export", "read"]) };
  await disconnect();
  return { tokens, email, password };
}

/**
 * A new, empty PostgreSQL database beside the one `base` names, on the same server (the role
 * must be allowed to CREATE DATABASE), and how to drop it. A database of that name is replaced.
 */
export async function siblingDatabase(base: string, suffix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const url = new URL(base);
  const name = `${url.pathname.slice(1)}_${suffix}`.replace(/\W/g, "_");
  await dropTestDatabase(base, name);
  await adminQuery(base, `CREATE DATABASE ${name}`);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => dropTestDatabase(base, name) };
}

export type App = {
  base: string;
  child: ChildProcess;
  output: () => string;
  /** SIGKILL: no shutdown hook runs, as in a crash. Resolves when the process is gone. */
  kill: () => Promise<void>;
  /** SIGTERM, then SIGKILL after a grace period. */
  stop: () => Promise<void>;
};

/** Starts the production server (lib/cli/serve.ts) on this database and waits until /api/health answers 200. */
export async function startApp(url: string, opts: { port?: number; env?: Record<string, string> } = {}): Promise<App> {
  const port = opts.port ?? (await freePort());
  const base = `http://127.0.0.1:${port}`;
  let log = "";
  const child = spawn(process.execPath, serverArgs(), {
    // Request log lines only when a test asks (LOG_LEVEL: "info"): they would push the start's lines out of `output()`.
    env: { ...process.env, DATABASE_URL: url, AUTH_SECRET, NODE_ENV: "production", PORT: String(port), HOSTNAME: "127.0.0.1", LOG_LEVEL: process.env.LOG_LEVEL ?? "warn", ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d) => (log = (log + d).slice(-20_000)));
  child.stderr!.on("data", (d) => (log = (log + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // After the exit and its output: `exit` can come before the last of stdout and stderr.
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const app: App = {
    base,
    child,
    output: () => log,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
  const t0 = performance.now();
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      await Promise.race([closed, new Promise((r) => setTimeout(r, 2000))]);
      throw new Error(`the server exited (${child.exitCode}):\n${log}`);
    }
    try {
      if ((await fetch(`${base}/api/health`)).ok) {
        recordPhase("server start", performance.now() - t0);
        return app;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await app.kill();
  throw new Error(`the server did not become healthy within 60 s:\n${log}`);
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** A verified operation: accepted, and the canonical read shows the intended effect. */
export function verifiedRecord(id: string, trajectory: string) {
  return {
    operation_id: id,
    trajectory_id: trajectory,
    tool: { name: "crm.update_contact", version: "3" },
    claimed_outcome: "success",
    intent: { target: "crm contact", effect: "set the contact's phone", fingerprint: `sha256:${id}` },
    receipt: { status: "accepted", receipt_id: `r-${id}`, observed_at: "2026-08-28T10:00:00Z" },
    canonical_read: { status: "match", observed_at: "2026-08-28T10:01:00Z", evidence: { object_id: `o-${id}`, fingerprint: `sha256:${id}` } },
  };
}

/** The essay's case: accepted, the canonical effect absent, a side effect observed. */
export function divergentRecord(id: string, trajectory: string) {
  return {
    operation_id: id,
    trajectory_id: trajectory,
    tool: { name: "social.publish", version: "2" },
    claimed_outcome: "success",
    intent: { target: "social account", effect: "publish exactly one post", fingerprint: `sha256:${id}` },
    receipt: { status: "accepted", receipt_id: `r-${id}`, observed_at: "2026-08-28T14:02:11Z" },
    canonical_read: { status: "absent", observed_at: "2026-08-28T14:31:02Z", evidence: "profile fetch does not show the post" },
    side_effects: [{ name: "daily post ceiling decremented", status: "observed" }],
    idempotency: { enforced: false, key: id },
  };
}

/** One receipt record with every stage, unique by its operation id. */
export function fullRecord(id: string, trajectory: string) {
  const base = verifiedRecord(id, trajectory);
  return {
    ...base,
    agent: { name: "reliability", version: "1" },
    intent: { ...base.intent, params: { phone: `+1555${id.length}` } },
    side_effects: [{ name: "audit log entry", status: "observed" }],
  };
}
