/**
 * Durable jobs across crashes and instances (docs/RELIABILITY.md): several processes run the
 * real job worker on one database (lib/jobs/testing/worker-process.ts), while new jobs keep being
 * enqueued; one process at a time is killed with SIGKILL mid-work and another started. At the
 * end every job is done and its result recorded exactly once: none lost with the killed
 * process (its leases run out and the jobs are claimed again), none recorded twice.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { deployMigrations } from "@/lib/cli/schema-engine";
import { disconnect, reader, writeTransaction } from "@/lib/store/db/db";
import { enqueueJobs } from "@/lib/store/work/jobs";
import { asSql } from "@/lib/store/db/sql";

export type JobsCrashOptions = { url: string; processes?: number; jobs?: number; kills?: number; log?: (line: string) => void };
export type JobsCrashReport = { jobs: number; kills: number; done: number; pending: number; recordedTwice: string[]; notRecorded: string[]; attemptsAboveOne: number };

type Worker = { child: ChildProcess; exited: Promise<void> };

function startWorker(url: string, kind: string): Promise<Worker> {
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=react-server", path.resolve("lib/jobs/testing/worker-process.ts")], {
    env: { ...process.env, DATABASE_URL: url, PROBE_KIND: kind, PROBE_LEASE_MS: "800" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr!.on("data", (d) => (err = (err + d).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d) => String(d).includes("ready") && resolve({ child, exited }));
    child.once("exit", (code) => reject(new Error(`worker exited (${code}) before it was ready: ${err}`)));
  });
}

export async function runJobsCrash(opts: JobsCrashOptions): Promise<JobsCrashReport> {
  const { url } = opts;
  const processes = opts.processes ?? 2;
  const total = opts.jobs ?? 400;
  const kills = opts.kills ?? 4;
  const log = opts.log ?? (() => {});
  process.env.DATABASE_URL = url;
  await deployMigrations(url);
  const kind = `probe-${Date.now()}`;
  const workers = await Promise.all(Array.from({ length: processes }, () => startWorker(url, kind)));
  const keys: string[] = [];
  const enqueue = async (n: number) => {
    const batch = Array.from({ length: n }, () => `${kind}:${keys.length + 1}`).map((key, i) => `${key}-${i}`);
    keys.push(...batch);
    await writeTransaction((tx) => enqueueJobs(tx, batch.map((key) => ({ kind, key, payload: null, dueAt: Date.now() }))));
  };
  try {
    const perRound = Math.ceil(total / (kills + 1));
    for (let k = 0; k < kills; k++) {
      await enqueue(perRound);
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      const victim = k % workers.length;
      workers[victim].child.kill("SIGKILL");
      await workers[victim].exited;
      log(`killed worker ${victim} after ${keys.length} jobs were enqueued`);
      workers[victim] = await startWorker(url, kind);
    }
    await enqueue(total - keys.length);
    const db = asSql(await reader());
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [row] = await db.all<{ n: number | bigint | string }>(`SELECT COUNT(*) AS n FROM job WHERE kind = '${kind}' AND status <> 'done'`);
      if (Number(row.n) === 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const jobs = await db.all<{ key: string; status: string; attempts: number | bigint }>(`SELECT key, status, attempts FROM job WHERE kind = '${kind}'`);
    const results = await db.all<{ key: string }>(`SELECT key FROM rate_limits WHERE key LIKE 'result:${kind}:%'`);
    const perJob = new Map<string, number>();
    for (const r of results) {
      const jobKey = r.key.slice("result:".length, r.key.lastIndexOf(":"));
      perJob.set(jobKey, (perJob.get(jobKey) ?? 0) + 1);
    }
    return {
      jobs: keys.length,
      kills,
      done: jobs.filter((j) => j.status === "done").length,
      pending: jobs.filter((j) => j.status !== "done").length,
      recordedTwice: keys.filter((k) => (perJob.get(k) ?? 0) > 1),
      notRecorded: keys.filter((k) => !perJob.has(k)),
      attemptsAboveOne: jobs.filter((j) => Number(j.attempts) > 1).length,
    };
  } finally {
    for (const w of workers) w.child.kill("SIGKILL");
    await Promise.all(workers.map((w) => w.exited));
    await disconnect();
  }
}
