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
  stop: () => Promise<void>;
};

/** Whether this machine can make one (the binaries are there). */
export function canMakeCluster(): boolean {
  return existsSync(path.join(BIN, "initdb")) && existsSync(path.join(BIN, "pg_ctl"));
}

export async function startCluster(): Promise<Cluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "reconcile-pg-"));
  const data = path.join(dir, "data");
  const port = await freePort();
  const root = process.getuid?.() === 0;
  if (root) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) => {
    const r = root ? spawnSync("runuser", ["-u", "postgres", "--", path.join(BIN, cmd), ...args], { encoding: "utf8" }) : spawnSync(path.join(BIN, cmd), args, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  run("initdb", ["-D", data, "-U", "dev", "--auth=trust", "--no-sync", "-E", "UTF8"]);
  // fsync off: a throwaway cluster; the fault here is a pause, not a crash.
  run("pg_ctl", ["-D", data, "-l", path.join(dir, "log"), "-w", "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`, "start"]);
  const postmaster = Number(readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
  /** The postmaster and its children (backends, background workers): this cluster's processes only. */
  const pids = () => {
    const children = spawnSync("pgrep", ["-P", String(postmaster)], { encoding: "utf8" }).stdout.split("\n").filter(Boolean).map(Number);
    return [postmaster, ...children];
  };
  let paused: number[] = [];
  return {
    url: `postgresql://dev:dev@127.0.0.1:${port}/postgres`,
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
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
