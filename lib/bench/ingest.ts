/**
 * `npm run bench:ingest`: ingest throughput and latency against the real production server on
 * a fresh embedded SQLite database (or BENCH_DATABASE_URL), and the raw better-sqlite3 insert
 * rate of the same rows as a ceiling. Prints figures; asserts nothing (docs/BENCHMARKS.md).
 *
 * Needs a build (`npm run build`). Options: --seconds N (single-record run, default 15),
 * --batches N (default 60), --clients N (concurrent batch clients, default 4), --database-url
 * postgresql://… (an empty database made for the purpose; the ceiling is then the best of raw pg
 * methods into copies of the tables, rawPostgresRate, and a second one replays every row the
 * batched run stored, replay-ceiling.ts).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { benchRecord } from "./bench-record";
import { startBenchServer } from "./bench-server";
import { cpuBudget, describeBudget, sample } from "./cpu-time";
import { copyRows } from "./pg-copy";
import { replayCeiling } from "./replay-ceiling";
import { secondHalfRate } from "./rates";
import Database from "better-sqlite3";
import pg from "pg";
import { chainHash, GENESIS_HASH } from "../domain/hash";
import { splitRecord } from "../domain/stages";

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "15" }, batches: { type: "string", default: "60" }, clients: { type: "string", default: "4" }, "database-url": { type: "string" } },
});
const SECONDS = Number(values.seconds);
const BATCHES = Number(values.batches);
const CLIENTS = Number(values.clients);
const tsx = [path.resolve("node_modules/tsx/dist/cli.mjs"), "--conditions=react-server", "lib/cli/index.ts"];

let counter = 0;
function record(tag: string) {
  const id = `bench-${tag}-${process.pid}-${++counter}`;
  return benchRecord(id, `bench-run-${Math.floor(counter / 10)}`);
}

/** Where a phase's CPU went (cpu-time.ts; Linux only, silent elsewhere). */
function printBudget(before: ReturnType<typeof sample>, after: ReturnType<typeof sample>, receipts: number) {
  if (before && after && receipts > 0) console.log(`  ${describeBudget(cpuBudget(before, after, receipts, os.cpus().length), os.cpus().length)}`);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-bench-"));
  const url = values["database-url"] || process.env.BENCH_DATABASE_URL || `file:${path.join(tmp, "bench.db")}`;
  // Its records carry canonical reads, which need the verify scope (TRUST.md): without it every
  // request was refused, and the figures measured refusals.
  const { base, token, server, env } = await startBenchServer(url, "ingest,verify,read");
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  console.log(`Reconcile ingest benchmark · ${os.cpus().length} cores · ${url.startsWith("file:") ? "SQLite (embedded)" : "PostgreSQL"} · node ${process.version}\n`);

  // warm-up
  for (let i = 0; i < 20; i++) await fetch(`${base}/api/v1/receipts`, { method: "POST", headers, body: JSON.stringify(record("warm")) });

  // 1. batches of 100, 4 clients (--clients)
  const batchLatencies: number[] = [];
  /** When each request's answer came (for the second half's rate). */
  const batchDone: number[] = [];
  let batchErrors = 0;
  let done = 0;
  // Bodies are made before the clock starts: the server, not the client, is measured.
  const bodies = Array.from({ length: BATCHES }, () => JSON.stringify({ records: Array.from({ length: 100 }, () => record("batch")) }));
  const cpu0 = sample(server.pid!);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (done < BATCHES) {
        const body = bodies[done++];
        const s = performance.now();
        const res = await fetch(`${base}/api/v1/receipts`, { method: "POST", headers, body });
        await res.arrayBuffer();
        const end = performance.now();
        batchLatencies.push(end - s);
        batchDone.push(end);
        if (res.status !== 200) batchErrors++;
      }
    }),
  );
  const batchSeconds = (performance.now() - t0) / 1000;
  const batchRate = (BATCHES * 100) / batchSeconds;
  batchLatencies.sort((a, b) => a - b);
  console.log(`batched (100 records/request, ${CLIENTS} clients): ${BATCHES} requests, ${(BATCHES * 100).toLocaleString()} receipts in ${batchSeconds.toFixed(1)} s`);
  console.log(`  throughput ${batchRate.toFixed(0)} receipts/s · p50 ${pct(batchLatencies, 50).toFixed(0)} ms · p99 ${pct(batchLatencies, 99).toFixed(0)} ms per request · errors ${batchErrors}`);
  printBudget(cpu0, sample(server.pid!), BATCHES * 100);
  // A server just started, on empty tables, is slower for its first several thousand records
  // (docs/BENCHMARKS.md, session 18): the second half's rate is the one a running server keeps.
  const sustainedRate = secondHalfRate(batchDone, 100);
  console.log(`  second half of the requests: ${sustainedRate.toFixed(0)} receipts/s (the first half includes the new server's warm-up)`);

  // 2. single records, 50 connections
  const cpu1 = sample(server.pid!);
  const single = await autocannon({
    url: `${base}/api/v1/receipts`,
    connections: 50,
    duration: SECONDS,
    requests: [{ method: "POST", headers, setupRequest: (req: object) => ({ ...req, body: JSON.stringify(record("single")) }) }],
  });
  const non2xx = single.non2xx + single.errors + single.timeouts;
  console.log(`single records (50 connections, ${SECONDS} s): ${single.requests.total} requests`);
  console.log(`  throughput ${single.requests.average.toFixed(0)} receipts/s · p50 ${single.latency.p50} ms · p99 ${single.latency.p99} ms · errors ${non2xx}`);
  printBudget(cpu1, sample(server.pid!), single.requests.total - non2xx);
  server.kill("SIGTERM");

  // 3. the ceiling: the same rows straight into the database with its own driver
  const ceiling = url.startsWith("file:") ? rawSqliteRate(path.join(tmp, "raw.db"), env) : await rawPostgresRate(url);
  console.log(`${ceiling.label} (same rows, hashed, 100/transaction): ${ceiling.rate.toFixed(0)} receipts/s`);
  console.log(`  HTTP batched ingest reaches ${((batchRate / ceiling.rate) * 100).toFixed(0)}% of the raw ceiling (its second half ${((sustainedRate / ceiling.rate) * 100).toFixed(0)}%)`);
  if (!url.startsWith("file:")) {
    // 4. every row ingest wrote for the batched run, written again by the driver alone
    const replay = await replayCeiling(url, "bench-batch-");
    console.log(
      `raw pg, every row ingest wrote, replayed (${replay.operations.toLocaleString()} operations, ${(replay.statementBytes / replay.operations / 1024).toFixed(1)} KiB of rows each, 100/transaction): JSON documents ${replay.rates.json.toFixed(0)} · COPY ${replay.rates.copy.toFixed(0)} receipts/s`,
    );
    console.log(`  HTTP batched ingest reaches ${((batchRate / replay.rate) * 100).toFixed(0)}% of the better one (its second half ${((sustainedRate / replay.rate) * 100).toFixed(0)}%)`);
  }
  rmSync(tmp, { recursive: true, force: true });
  process.exit(0);
}

/** The rows one batch writes (chain records, identity, view), hashed and linked as ingest does. */
function rawRows(records: ReturnType<typeof record>[], state: { seq: number; prev: string }) {
  const now = new Date().toISOString();
  const chain: unknown[][] = [];
  const ops: unknown[][] = [];
  for (const r of records) {
    const first = state.seq + 1;
    for (const d of splitRecord(r)) {
      state.seq++;
      const payload = { stage: d.stage, observed_at: d.observed_at, data: d.payload };
      const hash = chainHash({ seq: state.seq, kind: "stage", operation_id: r.operation_id, recorded_at: now, actor: "bench", payload, prev_hash: state.prev });
      chain.push([state.seq, r.operation_id, d.stage, d.observed_at, now, JSON.stringify(payload), state.prev, hash, first]);
      state.prev = hash;
    }
    ops.push([r.operation_id, first, now, state.seq]);
  }
  return { chain, ops };
}

function rawSqliteRate(rawDb: string, env: NodeJS.ProcessEnv): { label: string; rate: number } {
  execFileSync(process.execPath, [...tsx, "db:deploy"], { env: { ...env, DATABASE_URL: `file:${rawDb}` }, stdio: "pipe" });
  const db = new Database(rawDb);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  const insChain = db.prepare("INSERT INTO chain_records (seq, kind, operation_id, stage, observed_at, recorded_at, actor, payload, prev_hash, hash, op_seq) VALUES (?, 'stage', ?, ?, ?, ?, 'bench', ?, ?, ?, ?)");
  const insOp = db.prepare("INSERT INTO operations (operation_id, created_seq, created_at) VALUES (?, ?, ?)");
  const insView = db.prepare(
    "INSERT INTO operation_views (operation_id, created_seq, created_at, last_seq, updated_at, tool, outcome, reason, effective_outcome, needs_review, overclaimed, stage_count, correction_count, called_at) VALUES (?, ?, ?, ?, ?, 'social.publish', 'verified', 'x', 'verified', 0, 0, 4, 0, ?)",
  );
  const state = { seq: 0, prev: GENESIS_HASH };
  const rawBatch = db.transaction((records: ReturnType<typeof record>[]) => {
    const { chain, ops } = rawRows(records, state);
    for (const c of chain) insChain.run(...c);
    for (const [id, first, now, last] of ops) {
      insOp.run(id, first, now);
      insView.run(id, first, now, last, now, now);
    }
  });
  const r0 = performance.now();
  for (let i = 0; i < BATCHES; i++) rawBatch(Array.from({ length: 100 }, () => record("raw")));
  const rawRate = (BATCHES * 100) / ((performance.now() - r0) / 1000);
  db.close();
  return { label: "raw better-sqlite3 ceiling", rate: rawRate };
}

/**
 * The same rows with the pg driver alone, 100 receipts a transaction, into copies of the tables
 * (same columns and indexes), by each raw method; the best logged one is the ceiling:
 * - `values`: multi-row INSERT … VALUES, rows × columns parameters;
 * - `json`: the rows as one JSON document the server unpacks (what the ingest path does);
 * - `copy`: COPY … FROM STDIN in the text format (pg-copy-streams), PostgreSQL's bulk-load path;
 * - `temp`: `values` into temporary tables, which write no WAL and so no durable commit: more
 *   than any durable ingest can do, printed for comparison only.
 */
async function rawPostgresRate(url: string): Promise<{ label: string; rate: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const tables = ["chain_records", "operations", "operation_views"];
  const chainCols = ["seq", "operation_id", "stage", "observed_at", "recorded_at", "payload", "prev_hash", "hash", "op_seq", "kind", "actor"];
  const viewCols = ["operation_id", "created_seq", "created_at", "last_seq", "updated_at", "tool", "outcome", "reason", "effective_outcome", "needs_review", "overclaimed", "stage_count", "correction_count"];
  const values = (rows: unknown[][]) => {
    let n = 0;
    return rows.map((r) => `(${r.map(() => `$${++n}`).join(", ")})`).join(", ");
  };
  const types = new Map<string, Map<string, string>>();
  for (const t of tables) {
    const r = await client.query<{ column_name: string; udt_name: string }>("SELECT column_name, udt_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1", [t]);
    types.set(t, new Map(r.rows.map((c) => [c.column_name, c.udt_name])));
  }
  const fromJson = (table: string, cols: string[]) =>
    `INSERT INTO raw_${table} (${cols.join(", ")}) SELECT ${cols.map((c, i) => `(r->>${i})::${types.get(table)!.get(c)}`).join(", ")} FROM jsonb_array_elements($1::jsonb) AS r`;
  const run = async (method: "values" | "json" | "copy" | "temp") => {
    for (const t of tables) {
      await client.query(`DROP TABLE IF EXISTS raw_${t}`);
      await client.query(`CREATE ${method === "temp" ? "TEMP " : ""}TABLE raw_${t} (LIKE ${t} INCLUDING DEFAULTS INCLUDING INDEXES)`);
    }
    const state = { seq: 0, prev: GENESIS_HASH };
    const r0 = performance.now();
    for (let i = 0; i < BATCHES; i++) {
      const { chain, ops } = rawRows(Array.from({ length: 100 }, () => record("raw")), state);
      const chainRows = chain.map((c) => [...c, "stage", "bench"]);
      const opRows = ops.map((o) => o.slice(0, 3));
      const viewRows = ops.map(([id, first, now, last]) => [id, first, now, last, now, "social.publish", "verified", "x", "verified", false, false, 4, 0]);
      await client.query("BEGIN");
      if (method === "json") {
        await client.query(fromJson("chain_records", chainCols), [JSON.stringify(chainRows)]);
        await client.query(fromJson("operations", ["operation_id", "created_seq", "created_at"]), [JSON.stringify(opRows)]);
        await client.query(fromJson("operation_views", viewCols), [JSON.stringify(viewRows)]);
      } else if (method === "copy") {
        await copyRows(client, "raw_chain_records", chainCols, chainRows);
        await copyRows(client, "raw_operations", ["operation_id", "created_seq", "created_at"], opRows);
        await copyRows(client, "raw_operation_views", viewCols, viewRows);
      } else {
        await client.query(`INSERT INTO raw_chain_records (${chainCols.join(", ")}) VALUES ${values(chainRows)}`, chainRows.flat());
        await client.query(`INSERT INTO raw_operations (operation_id, created_seq, created_at) VALUES ${values(opRows)}`, opRows.flat());
        await client.query(`INSERT INTO raw_operation_views (${viewCols.join(", ")}) VALUES ${values(viewRows)}`, viewRows.flat());
      }
      await client.query("COMMIT");
    }
    const rate = (BATCHES * 100) / ((performance.now() - r0) / 1000);
    for (const t of tables) await client.query(`DROP TABLE raw_${t}`);
    return rate;
  };
  try {
    // Each durable method twice, in both orders, its better run kept: neither gains from going second.
    const rates = { values: await run("values"), json: await run("json"), copy: await run("copy"), temp: await run("temp") };
    rates.copy = Math.max(rates.copy, await run("copy"));
    rates.json = Math.max(rates.json, await run("json"));
    rates.values = Math.max(rates.values, await run("values"));
    console.log(
      `raw pg by method, receipts/s: multi-row VALUES ${rates.values.toFixed(0)} · one JSON document ${rates.json.toFixed(0)} · COPY ${rates.copy.toFixed(0)} · VALUES into temporary tables (no WAL, not durable) ${rates.temp.toFixed(0)}`,
    );
    return { label: "raw pg ceiling, best durable method", rate: Math.max(rates.values, rates.json, rates.copy) };
  } finally {
    await client.end();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
