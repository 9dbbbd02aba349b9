import "server-only";
import { readdirSync } from "node:fs";
import path from "node:path";
import { provider } from "@/lib/store/db/database";
import { appliedMigrations, readVitals, type Vitals } from "@/lib/store/queries/vitals";
import { workerState } from "@/lib/jobs/worker";

/**
 * /api/health/ready: may this instance take traffic? The database answers, every migration this
 * code ships is applied, and the job worker (when this instance runs one) goes round its loop.
 */
export type Readiness = {
  ready: boolean;
  checks: {
    database: { ok: boolean; error?: string };
    migrations: { ok: boolean; applied?: number; expected?: number; missing?: string[]; error?: string };
    jobs: { ok: boolean; worker: "running" | "stalled" | "off"; last_beat_ms_ago: number | null };
  };
};

/** Where the project's files are: the production server says (lib/cli/serve.ts), else the working directory. */
const root = globalThis as unknown as { __reconcileAppDir?: string };
export function setAppDir(dir: string): void {
  root.__reconcileAppDir = dir;
}

function shippedMigrations(): string[] {
  const dir = path.join(root.__reconcileAppDir ?? process.cwd(), "prisma/migrations", provider());
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

/** The migrations this code ships that the current project's database has not applied (lib/cli/projects.ts deploys only then). */
export async function missingMigrations(): Promise<string[]> {
  const applied = new Set(await appliedMigrations());
  return shippedMigrations().filter((m) => !applied.has(m));
}

export async function readiness(): Promise<Readiness> {
  let database: Readiness["checks"]["database"] = { ok: true };
  let migrations: Readiness["checks"]["migrations"];
  try {
    const applied = new Set(await appliedMigrations());
    try {
      const shipped = shippedMigrations();
      const missing = shipped.filter((m) => !applied.has(m));
      migrations = { ok: missing.length === 0, applied: applied.size, expected: shipped.length, ...(missing.length ? { missing: missing.slice(0, 10) } : {}) };
    } catch {
      migrations = { ok: false, error: "this server cannot find its own migrations (prisma/migrations)" };
    }
  } catch {
    database = { ok: false, error: "the database is not reachable, or has no migrations table (run npm run db:deploy)" };
    migrations = { ok: false, error: "unknown: the database did not answer" };
  }
  const w = workerState();
  // An instance started with RECONCILE_JOBS=off runs no worker by design: ready, and it says so.
  const jobs = { ok: w.state !== "stalled", worker: w.state, last_beat_ms_ago: w.lastBeatAgoMs };
  return { ready: database.ok && migrations.ok && jobs.ok, checks: { database, migrations, jobs } };
}

/** The audit page's health panel: readiness and the database's figures, read together, and when. */
export async function serverHealth(): Promise<{ ready: Readiness; vitals: Vitals; now: number }> {
  const now = Date.now();
  const [ready, vitals] = await Promise.all([readiness(), readVitals(now)]);
  return { ready, vitals, now };
}
