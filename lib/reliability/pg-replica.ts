/**
 * A primary and a streaming-replication standby of the harness's own (issue 35, part 1): two
 * PostgreSQL 15 clusters on loopback ports, the standby made with `pg_basebackup -R` and named
 * the primary's synchronous standby (`synchronous_standby_names`), with `synchronous_commit`
 * chosen by the caller: `remote_apply` (a commit is acknowledged once the standby has applied
 * it) or `local` (asynchronous replication: acknowledged once on the primary's disk). The fault:
 * SIGKILL of the primary's postmaster and every backend, then `pg_ctl promote` of the standby.
 * As root (CI), everything runs as the `postgres` user, as pg-cluster.ts does. fsync is off:
 * the fault is a killed process, whose writes the operating system keeps.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "@/lib/testing/ports";

const BIN = process.env.RECONCILE_PG_BIN ?? "/usr/lib/postgresql/15/bin";
const STANDBY_NAME = "reconcile_standby";

export type SynchronousCommit = "remote_apply" | "local";

export type ReplicatedPair = {
  primaryPort: number;
  standbyPort: number;
  /** A superuser URL on the primary's `postgres` database. */
  primaryUrl: string;
  /** The same database on both hosts, as libpq writes it: `postgresql://dev:dev@127.0.0.1:P,127.0.0.1:S/DB?target_session_attrs=read-write`. */
  multiHostUrl: (database: string) => string;
  /** Waits until the standby has applied everything the primary has written so far. */
  caughtUp: () => Promise<void>;
  /** SIGSTOP to the standby's WAL receiver: replication lags from now on (a slow or distant standby). */
  pauseReceiver: () => Promise<void>;
  /**
   * SIGKILL to it, after the primary's death: the WAL still in its socket's buffer, which a
   * primary machine that died would never have sent, is dropped (on one machine the kernel
   * would otherwise deliver it after the primary process is gone). The standby keeps what it had.
   */
  dropReceiver: () => void;
  /** SIGKILL to the primary's postmaster and all its children. */
  killPrimary: () => void;
  /** `pg_ctl promote` of the standby, waiting until it accepts writes. */
  promote: () => void;
  stop: () => Promise<void>;
};

export async function startReplicatedPair(opts: { synchronousCommit: SynchronousCommit }): Promise<ReplicatedPair> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "reconcile-pg-pair-"));
  const primary = path.join(dir, "primary");
  const standby = path.join(dir, "standby");
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
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
  const common = (port: number) => `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=80 -c wal_level=replica -c hot_standby=on`;
  run("initdb", ["-D", primary, "-U", "dev", "--auth=trust", "--no-sync", "-E", "UTF8"]);
  // Only the primary names a synchronous standby: after promotion, the new primary has none to wait for.
  run("pg_ctl", ["-D", primary, "-l", path.join(dir, "primary.log"), "-w", "-o", `${common(primaryPort)} -c synchronous_standby_names=${STANDBY_NAME} -c synchronous_commit=${opts.synchronousCommit}`, "start"]);
  let stopped = false;
  const stopAll = () => {
    for (const data of [primary, standby]) spawnSync(root ? "runuser" : path.join(BIN, "pg_ctl"), root ? ["-u", "postgres", "--", path.join(BIN, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"] : ["-D", data, "-m", "immediate", "-w", "stop"]);
  };
  try {
    run("pg_basebackup", ["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "dev", "-D", standby, "-R", "-X", "stream", "--no-sync"]);
    // cluster_name is the standby's application_name on the primary: what synchronous_standby_names names.
    run("pg_ctl", ["-D", standby, "-l", path.join(dir, "standby.log"), "-w", "-o", `${common(standbyPort)} -c cluster_name=${STANDBY_NAME}`, "start"]);
  } catch (e) {
    stopAll();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const primaryUrl = `postgresql://dev:dev@127.0.0.1:${primaryPort}/postgres`;
  const standbyUrl = `postgresql://dev:dev@127.0.0.1:${standbyPort}/postgres`;
  const one = async <T extends pg.QueryResultRow>(url: string, sql: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query<T>(sql)).rows[0];
    } finally {
      await c.end();
    }
  };
  const caughtUp = async () => {
    const target = (await one<{ lsn: string }>(primaryUrl, "SELECT pg_current_wal_lsn()::text AS lsn")).lsn;
    const by = Date.now() + 30_000;
    while (Date.now() < by) {
      const r = await one<{ ok: boolean }>(standbyUrl, `SELECT pg_last_wal_replay_lsn() >= '${target}'::pg_lsn AS ok`);
      if (r.ok) return;
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error("the standby did not catch up within 30 s");
  };
  // The standby streaming, and synchronous when asked.
  const by = Date.now() + 30_000;
  for (;;) {
    const r = await one<{ state: string | null }>(primaryUrl, `SELECT sync_state AS state FROM pg_stat_replication WHERE application_name = '${STANDBY_NAME}'`);
    if (r?.state === "sync") break;
    if (Date.now() > by) {
      stopAll();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`the standby did not become synchronous within 30 s (sync_state ${r?.state ?? "absent"})`);
    }
    await new Promise((res) => setTimeout(res, 50));
  }
  const postmaster = Number(readFileSync(path.join(primary, "postmaster.pid"), "utf8").split("\n")[0]);
  let receiver = 0;
  return {
    pauseReceiver: async () => {
      receiver = (await one<{ pid: number }>(standbyUrl, "SELECT pid FROM pg_stat_wal_receiver")).pid;
      process.kill(receiver, "SIGSTOP");
    },
    dropReceiver: () => {
      if (receiver) process.kill(receiver, "SIGKILL");
      receiver = 0;
    },
    primaryPort,
    standbyPort,
    primaryUrl,
    multiHostUrl: (database) => `postgresql://dev:dev@127.0.0.1:${primaryPort},127.0.0.1:${standbyPort}/${database}?target_session_attrs=read-write`,
    caughtUp,
    killPrimary: () => {
      const children = spawnSync("pgrep", ["-P", String(postmaster)], { encoding: "utf8" }).stdout.split("\n").filter(Boolean).map(Number);
      for (const pid of [postmaster, ...children]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    },
    promote: () => run("pg_ctl", ["-D", standby, "-w", "promote"]),
    stop: async () => {
      if (stopped) return;
      if (receiver) process.kill(receiver, "SIGCONT");
      stopped = true;
      stopAll();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
