/**
 * A throwaway PostgreSQL 15 cluster of the harness's own (initdb in a temporary folder, a free
 * loopback port), for faults that must not touch the shared one: SIGSTOP of the whole database
 * (issue 35, part 4) pauses this cluster's processes only, found by their parent, the
 * postmaster this file started. As root (CI), initdb and the server run as the `postgres` user,
 * which PostgreSQL requires.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "@/lib/testing/ports";

const BIN = process.env.RECONCILE_PG_BIN ?? "/usr/lib/postgresql/15/bin";

export type Cluster = {
  /** postgresql://dev:dev@127.0.0.1:PORT/postgres: a superuser on this cluster. */
  url: string;
  /** SIGSTOP to the postmaster and every backend: the database answers nothing, and says nothing. */
  pause: () => void;
  /** SIGCONT to the same. */
  resume: () => void;
  /** Whether the postmaster is running (a PANIC on a full disk can end it). */
  running: () => boolean;
  /** `pg_ctl start` again, after the postmaster ended. */
  restart: () => void;
  /** Where the data directory is. */
  data: string;
  stop: () => Promise<void>;
};

/** Whether this machine can make one (the binaries are there). */
export function canMakeCluster(): boolean {
  return existsSync(path.join(BIN, "initdb")) && existsSync(path.join(BIN, "pg_ctl"));
}

/**
 * `under`: a folder to make the cluster's folder in (a small tmpfs, for a full disk); `walSegmentMiB`: initdb's
 * --wal-segsize (1 MiB lets a small disk hold the WAL PostgreSQL keeps); `settings`: more `-c` options.
 */
export async function startCluster(opts: { under?: string; walUnder?: string; walSegmentMiB?: number; settings?: string } = {}): Promise<Cluster> {
  const dir = mkdtempSync(path.join(opts.under ?? os.tmpdir(), "reconcile-pg-"));
  // `walUnder`: the WAL alone on that folder (initdb --waldir), the rest in `dir`.
  const walDir = opts.walUnder ? path.join(mkdtempSync(path.join(opts.walUnder, "reconcile-pg-wal-")), "wal") : null;
  const data = path.join(dir, "data");
  const port = await freePort();
  const root = process.getuid?.() === 0;
  if (root) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
    if (walDir) chownSync(path.dirname(walDir), uid, gid);
  }
  const run = (cmd: string, args: string[]) => {
    const r = root ? spawnSync("runuser", ["-u", "postgres", "--", path.join(BIN, cmd), ...args], { encoding: "utf8" }) : spawnSync(path.join(BIN, cmd), args, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  run("initdb", ["-D", data, "-U", "dev", "--auth=trust", "--no-sync", "-E", "UTF8", ...(opts.walSegmentMiB ? [`--wal-segsize=${opts.walSegmentMiB}`] : []), ...(walDir ? [`--waldir=${walDir}`] : [])]);
  // fsync off: a throwaway cluster; the faults here are a pause and a full disk, not a power loss.
  const start = () => run("pg_ctl", ["-D", data, "-l", path.join(dir, "log"), "-w", "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60 ${opts.settings ?? ""}`, "start"]);
  start();
  let postmaster = Number(readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
  /** The postmaster and its children (backends, background workers): this cluster's processes only. */
  const pids = () => {
    const children = spawnSync("pgrep", ["-P", String(postmaster)], { encoding: "utf8" }).stdout.split("\n").filter(Boolean).map(Number);
    return [postmaster, ...children];
  };
  let paused: number[] = [];
  const running = () => {
    try {
      process.kill(postmaster, 0);
      return true;
    } catch {
      return false;
    }
  };
  return {
    url: `postgresql://dev:dev@127.0.0.1:${port}/postgres`,
    data,
    running,
    restart: () => {
      if (running()) return;
      start();
      postmaster = Number(readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    },
    pause: () => {
      paused = pids();
      for (const pid of paused) process.kill(pid, "SIGSTOP");
    },
    resume: () => {
      // Those paused, and any started meanwhile (none can start while the postmaster is stopped).
      for (const pid of new Set([...paused, ...pids()])) {
        try {
          process.kill(pid, "SIGCONT");
        } catch {
          // gone
        }
      }
      paused = [];
    },
    stop: async () => {
      for (const pid of paused) {
        try {
          process.kill(pid, "SIGCONT");
        } catch {
          // gone
        }
      }
      try {
        // A postmaster that ended by itself (a PANIC) has nothing to stop.
        if (running()) run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
        if (walDir) rmSync(path.dirname(walDir), { recursive: true, force: true });
      }
    },
  };
}
