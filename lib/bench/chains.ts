/**
 * bench:chains — ingest with 1, 4 and 16 hash chains from two instances on one PostgreSQL
 * (issue 17, part 3; docs/DEPLOY.md). For each chain count it makes a fresh database beside the
 * one named (RECONCILE_CHAINS recorded at creation), starts two production servers on it, and
 * measures three kinds of traffic through both at once, in one run so the figures compare:
 *
 *   - mixed batches: 100 operations a request, ids at random, so a request spans every chain;
 *   - batches by chain: 100 operations a request, all of one chain (a client that shards);
 *   - single records: one operation a request, the report of one tool call.
 *
 * Prints receipts/s for each and the ratio to one chain. Asserts nothing (docs/BENCHMARKS.md).
 *
 *   npm run bench:chains -- --database-url postgresql://…/NAME [--chains 1,4,16] [--seconds 10]
 *                           [--clients 8] [--instances 2]
 *
 * Needs a build (`npm run build`) and a role that may CREATE DATABASE.
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { chainOf } from "@/lib/domain/chains";
import { splitRecord } from "@/lib/domain/stages";
import { fullRecord, prepareDatabase, siblingDatabase, startApp, type App } from "@/lib/reliability/harness";
import { disconnect } from "@/lib/store/db/db";

const { values } = parseArgs({
  options: {
    "database-url": { type: "string" },
    chains: { type: "string", default: "1,4,16" },
    seconds: { type: "string", default: "10" },
    clients: { type: "string", default: "8" },
    instances: { type: "string", default: "2" },
  },
});
const BASE = values["database-url"] ?? process.env.BENCH_DATABASE_URL;
if (!BASE?.startsWith("postgres")) throw new Error("--database-url must name a PostgreSQL database (its server gets one new database per chain count)");
const CHAINS = values.chains.split(",").map(Number);
if (CHAINS.some((n) => !Number.isInteger(n) || n < 1 || n > 64)) throw new Error("--chains: chain counts 1–64, comma-separated");
const SECONDS = Number(values.seconds);
const CLIENTS = Number(values.clients);
const INSTANCES = Number(values.instances);
const STAGES = splitRecord(fullRecord("x", "y")).length;

type Shape = "mixed batches" | "batches by chain" | "single records";
const SHAPES: Shape[] = ["mixed batches", "batches by chain", "single records"];

let runs = 0;
// A new name for every run: a database's chain count is read once per process and name.
const freshDatabase = (chains: number) => siblingDatabase(BASE!, `bench_chains_${chains}_${++runs}`);

let counter = 0;
const nextId = (tag: string) => `bench-${tag}-${process.pid}-${++counter}`;

/** Request bodies of one shape, made before the clock starts (the servers are measured, not this process). */
function bodies(shape: Shape, chains: number, requests: number): { body: string; receipts: number }[] {
  if (shape === "single records") {
    return Array.from({ length: requests }, () => ({ body: JSON.stringify(fullRecord(nextId("s"), `bench-run-${counter % 97}`)), receipts: 1 }));
  }
  if (shape === "mixed batches") {
    return Array.from({ length: requests }, () => ({
      body: JSON.stringify({ records: Array.from({ length: 100 }, () => fullRecord(nextId("m"), `bench-run-${counter % 97}`)) }),
      receipts: 100,
    }));
  }
  // By chain: ids drawn until each chain has a full batch, requests taking the chains in turn.
  const buckets: string[][] = Array.from({ length: chains }, () => []);
  const out: { body: string; receipts: number }[] = [];
  while (out.length < requests) {
    const id = nextId("g");
    const c = chainOf(id, chains);
    buckets[c].push(id);
    if (buckets[c].length === 100) {
      out.push({ body: JSON.stringify({ records: buckets[c].map((i) => fullRecord(i, `bench-run-${c}`)) }), receipts: 100 });
      buckets[c] = [];
    }
  }
  return out;
}

/** Sends the bodies through the instances, CLIENTS at a time (single records: 4× as many), for at most SECONDS. */
/** The machine's CPU time so far, busy and total (all cores), from os.cpus(). */
function cpuTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const c of os.cpus()) {
    const t = c.times;
    busy += t.user + t.nice + t.sys + t.irq;
    total += t.user + t.nice + t.sys + t.irq + t.idle;
  }
  return { busy, total };
}

type Result = { rate: number; errors: number; p99: number; cpu: number };

async function drive(apps: App[], token: string, shape: Shape, chains: number): Promise<Result> {
  const clients = shape === "single records" ? CLIENTS * 4 : CLIENTS;
  const pool = bodies(shape, chains, shape === "single records" ? 4000 * SECONDS : 40 * SECONDS);
  const latencies: number[] = [];
  let next = 0;
  let receipts = 0;
  let errors = 0;
  const cpu0 = cpuTimes();
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, k) => {
      const app = apps[k % apps.length];
      while (next < pool.length && performance.now() < deadline) {
        const { body, receipts: n } = pool[next++];
        const s = performance.now();
        const res = await fetch(`${app.base}/api/v1/receipts`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body });
        await res.arrayBuffer();
        latencies.push(performance.now() - s);
        if (res.status === 200 || res.status === 201) receipts += n;
        else errors++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = cpuTimes();
  latencies.sort((a, b) => a - b);
  return {
    rate: receipts / seconds,
    errors,
    p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? NaN,
    cpu: (cpu1.busy - cpu0.busy) / Math.max(1, cpu1.total - cpu0.total),
  };
}

async function main() {
  console.log(`Reconcile chains benchmark · ${os.cpus().length} cores · PostgreSQL · ${INSTANCES} instances · ${CLIENTS} batch clients · node ${process.version}`);
  console.log(`each operation: ${STAGES} stage records; ${SECONDS} s per kind of traffic\n`);
  const results = new Map<number, Map<Shape, Result>[]>();
  for (const chains of CHAINS) {
    const db = await freshDatabase(chains);
    const { tokens } = await prepareDatabase(db.url, `bench-chains-${chains}`, { chains });
    await disconnect();
    const apps = await Promise.all(Array.from({ length: INSTANCES }, () => startApp(db.url, { env: { RECONCILE_CHAINS: String(chains), RECONCILE_JOBS: "off" } })));
    try {
      // Warm-up: compile, connect, prepare, on every instance.
      for (const app of apps) {
        for (let i = 0; i < 30; i++) {
          await fetch(`${app.base}/api/v1/receipts`, { method: "POST", headers: { authorization: `Bearer ${tokens.ingest}`, "content-type": "application/json" }, body: JSON.stringify(fullRecord(nextId("w"), "warm")) });
        }
      }
      const row = new Map<Shape, Result>();
      for (const shape of SHAPES) {
        const r = await drive(apps, tokens.ingest, shape, chains);
        row.set(shape, r);
        console.log(
          `${String(chains).padStart(2)} chain${chains === 1 ? " " : "s"} · ${shape.padEnd(16)} ${r.rate.toFixed(0).padStart(6)} receipts/s · p99 ${r.p99.toFixed(0)} ms · CPU ${(r.cpu * 100).toFixed(0)}% busy · errors ${r.errors}`,
        );
      }
      results.set(chains, [...(results.get(chains) ?? []), row]);
    } finally {
      await Promise.all(apps.map((a) => a.stop()));
      await db.drop();
    }
  }
  // Each chain count's mean over its runs (a count given twice runs twice: alternate the order
  // to see the noise), as a ratio to the first count's.
  const mean = (rows: Map<Shape, Result>[], s: Shape) => rows.reduce((sum, r) => sum + r.get(s)!.rate, 0) / rows.length;
  const first = results.get(CHAINS[0])!;
  console.log(`\nreceipts/s, mean of each count's runs (ratio to ${CHAINS[0]} chain${CHAINS[0] === 1 ? "" : "s"}, same run)`);
  console.log(`chains | runs | ${SHAPES.join(" | ")}`);
  for (const [chains, rows] of results) {
    console.log(`${String(chains).padStart(6)} | ${rows.length} | ${SHAPES.map((s) => `${mean(rows, s).toFixed(0)} (${(mean(rows, s) / mean(first, s)).toFixed(2)}×)`).join(" | ")}`);
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
