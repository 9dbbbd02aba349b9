/**
 * The crash-safety harness (docs/RELIABILITY.md): the real server on the embedded SQLite
 * database, or on PostgreSQL, takes batches and single records from several clients and is
 * killed with SIGKILL at a random moment, again and again. After each kill, with the server down:
 *   - on SQLite, `PRAGMA integrity_check` answers ok (PostgreSQL outlives the server: its
 *     sessions end, and what they had not committed is rolled back);
 *   - every acknowledged request's records are stored, each exactly once;
 *   - every request is all-or-nothing (a batch's records all stored, or none of them);
 *   - the projection agrees with the records (a view for exactly the stored operations);
 *   - the whole chain verifies, link by link.
 * After the restart, the unacknowledged requests are sent again, and everything converges to
 * exactly one copy of each record.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { splitRecord } from "@/lib/domain/stages";
import { disconnect } from "@/lib/store/db/db";
import { verifyStoredChain } from "@/lib/store/chain/verify-chain";
import { fullRecord, prepareDatabase, seeded, startApp, type App } from "./harness";

export type CrashOptions = {
  /** A `file:` URL of a database that does not exist yet, or an empty PostgreSQL database. */
  url: string;
  trials: number;
  clients?: number;
  seed?: number;
  /** The kill comes this many ms after the traffic starts, drawn uniformly. */
  killAfterMs?: [number, number];
  log?: (line: string) => void;
  /** Hash chains of the database (RECONCILE_CHAINS, recorded when it is made). Default 1. */
  chains?: number;
};

type Request = { id: number; body: unknown; operationIds: string[]; stagesPerOperation: number; acked: boolean };

export type CrashReport = {
  trials: number;
  seed: number;
  requestsSent: number;
  acknowledged: number;
  unacknowledgedRetried: number;
  /** Unacknowledged requests whose records were nevertheless committed before the kill. */
  committedButUnacknowledged: number;
  recordsStored: number;
  chainLength: number;
  serverErrors: number;
  /** Every problem found; empty when every promise held. */
  problems: string[];
  restartMs: number[];
};

export async function runCrashTrials(opts: CrashOptions): Promise<CrashReport> {
  const seed = opts.seed ?? Date.now() % 2 ** 31;
  const random = seeded(seed);
  const clients = opts.clients ?? 4;
  const [killMin, killMax] = opts.killAfterMs ?? [100, 1500];
  const log = opts.log ?? (() => {});
  const chainsEnv = { RECONCILE_CHAINS: String(opts.chains ?? 1) };
  const { tokens } = await prepareDatabase(opts.url, "crash", { chains: opts.chains ?? 1 });
  const requests: Request[] = [];
  let unacked: Request[] = [];
  let nextOp = 0;
  const report: CrashReport = {
    trials: 0,
    seed,
    requestsSent: 0,
    acknowledged: 0,
    unacknowledgedRetried: 0,
    committedButUnacknowledged: 0,
    recordsStored: 0,
    chainLength: 0,
    serverErrors: 0,
    problems: [],
    restartMs: [],
  };
  const problem = (trial: number, text: string) => {
    report.problems.push(`trial ${trial}: ${text}`);
    log(`PROBLEM trial ${trial}: ${text}`);
  };

  const post = async (app: App, req: Request): Promise<"acked" | "refused" | "lost"> => {
    let res: Response;
    try {
      res = await fetch(`${app.base}/api/v1/receipts`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokens.ingest}`, "content-type": "application/json" },
        body: JSON.stringify(req.body),
      });
    } catch {
      return "lost";
    }
    let text: string;
    try {
      text = await res.text();
    } catch {
      return "lost"; // the status line arrived, the body did not: not an acknowledgement
    }
    if (res.status >= 500) report.serverErrors++;
    if (res.status === 200 || res.status === 201) {
      const body = JSON.parse(text) as { results?: { status: number }[] };
      if (body.results && body.results.some((r) => r.status >= 300)) return "refused";
      return "acked";
    }
    return "refused";
  };

  const newRequest = (): Request => {
    const batch = random() < 0.7;
    const n = batch ? 1 + Math.floor(random() * 60) : 1;
    const records = Array.from({ length: n }, () => {
      const id = `crash-${seed}-${++nextOp}`;
      return fullRecord(id, `crash-run-${Math.floor(nextOp / 25)}`);
    });
    const req: Request = {
      id: requests.length,
      body: batch ? { records } : records[0],
      operationIds: records.map((r) => r.operation_id),
      stagesPerOperation: splitRecord(records[0]).length,
      acked: false,
    };
    requests.push(req);
    return req;
  };

  /** The checks made with the server down, straight on the database. */
  const inspect = async (trial: number) => {
    const db = await openDirect(opts.url);
    try {
      const integrity = await db.integrity();
      if (integrity !== "ok") problem(trial, `integrity_check says ${integrity}`);
      const counts = new Map<string, number>();
      for (const row of await db.all<{ id: string; n: number | string }>(
        "SELECT operation_id AS id, count(*) AS n FROM chain_records WHERE kind = 'stage' AND operation_id LIKE $1 GROUP BY operation_id",
        [`crash-${seed}-%`],
      )) {
        counts.set(row.id, Number(row.n));
      }
      const views = new Set((await db.all<{ id: string }>("SELECT operation_id AS id FROM operation_views WHERE operation_id LIKE $1", [`crash-${seed}-%`])).map((r) => r.id));
      let stored = 0;
      for (const req of requests) {
        const per = req.operationIds.map((id) => counts.get(id) ?? 0);
        const complete = per.every((n) => n === req.stagesPerOperation);
        const none = per.every((n) => n === 0);
        if (!complete && !none) problem(trial, `request ${req.id} is half-written: stage counts ${per.join(",")}`);
        if (per.some((n) => n > req.stagesPerOperation)) problem(trial, `request ${req.id} is stored more than once`);
        if (req.acked && !complete) problem(trial, `acknowledged request ${req.id} is missing`);
        if (complete) stored += req.operationIds.length;
        for (const id of req.operationIds) {
          if ((counts.get(id) ?? 0) > 0 !== views.has(id)) problem(trial, `the projection disagrees with the records for ${id}`);
        }
      }
      report.recordsStored = stored;
      return counts;
    } finally {
      await db.close();
    }
  };

  const verifyChain = async (trial: number) => {
    process.env.DATABASE_URL = opts.url;
    const { verdict } = await verifyStoredChain();
    await disconnect();
    if (!verdict.ok) problem(trial, `the chain breaks at seq ${verdict.badSeq}: ${verdict.problem}`);
    report.chainLength = verdict.count;
  };

  for (let trial = 1; trial <= opts.trials + 1; trial++) {
    const started = Date.now();
    const app = await startApp(opts.url, { env: chainsEnv });
    report.restartMs.push(Date.now() - started);
    // Convergence: every request the last crash left unanswered, sent again.
    for (const req of unacked) {
      const r = await post(app, req);
      if (r !== "acked") problem(trial, `retrying request ${req.id} did not succeed (${r})`);
      else req.acked = true;
      report.unacknowledgedRetried++;
    }
    unacked = [];
    if (trial > opts.trials) {
      // The last round only converges: stop cleanly and check once more.
      await app.stop();
      await inspect(trial);
      await verifyChain(trial);
      break;
    }
    let killed = false;
    const inflight: Request[] = [];
    const client = async () => {
      while (!killed) {
        const req = newRequest();
        inflight.push(req);
        report.requestsSent++;
        const r = await post(app, req);
        if (r === "acked") {
          req.acked = true;
          report.acknowledged++;
        } else if (r === "refused") {
          problem(trial, `request ${req.id} was refused`);
        }
      }
    };
    const running = Array.from({ length: clients }, client);
    const wait = killMin + random() * (killMax - killMin);
    await new Promise((r) => setTimeout(r, wait));
    killed = true;
    await app.kill();
    await Promise.all(running);
    unacked = inflight.filter((r) => !r.acked);
    const counts = await inspect(trial);
    report.committedButUnacknowledged += unacked.filter((r) => r.operationIds.every((id) => (counts.get(id) ?? 0) > 0)).length;
    await verifyChain(trial);
    report.trials = trial;
    log(`trial ${trial}: killed after ${Math.round(wait)} ms; ${inflight.length} requests, ${unacked.length} unanswered; ${report.recordsStored} operations stored, chain ${report.chainLength}`);
  }
  return report;
}

/** The database behind a URL, read directly (the server is down): `$n` placeholders on both. */
async function openDirect(url: string) {
  if (url.startsWith("file:")) {
    const db = new Database(url.slice("file:".length));
    return {
      integrity: async () => String(db.pragma("integrity_check", { simple: true })),
      all: async <T>(sql: string, params: unknown[]) => db.prepare(sql.replace(/\$\d+/g, "?")).all(...params) as T[],
      close: async () => db.close(),
    };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    integrity: async () => "ok",
    all: async <T>(sql: string, params: unknown[]) => (await client.query(sql, params)).rows as T[],
    close: () => client.end(),
  };
}
