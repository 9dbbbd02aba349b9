/**
 * `npm run bench:responsive` (issue 51): does ingest starve the operator? The production server
 * on a fresh database with `--preload` operations; a reviewer's signed-in session times the
 * operations page, the review queue and `GET /api/v1/operations?limit=50` in turn, `--samples`
 * requests a phase, while ingest runs: none, paced at each `--paced` rate, then `--loops`
 * unpaced loops of 100-record batches. Prints, per phase, the receipts a second acknowledged,
 * the pages' p50 and p95, and p95 ÷ the idle p95 — ratios of one run (the machine's speed moves
 * within a day; docs/BENCHMARKS.md).
 *
 *   npm run bench:responsive [-- --preload 5000 --samples 45 --paced 1000,3000 --loops 4]
 *   npm run bench:responsive -- --database-url postgresql://…/empty_db
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { percentile, verifiedRecord } from "@/lib/reliability/harness";
import { signIn } from "@/lib/reliability/load";
import { startBenchServer, stopBenchServer } from "./bench-server";

const { values } = parseArgs({
  options: {
    preload: { type: "string", default: "5000" },
    samples: { type: "string", default: "45" },
    paced: { type: "string", default: "1000,3000" },
    loops: { type: "string", default: "4" },
    "database-url": { type: "string" },
  },
});
const PRELOAD = Number(values.preload);
const SAMPLES = Number(values.samples);
const PACED = values.paced!.split(",").filter(Boolean).map(Number);
const LOOPS = Number(values.loops);
const BATCH = 100;
for (const [name, n] of [["--preload", PRELOAD], ["--samples", SAMPLES], ["--loops", LOOPS], ...PACED.map((r) => ["--paced", r] as const)] as const) {
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} takes a whole number ≥ 0, not ${n}`);
}

let nextId = 0;
/** Ingest requests not acknowledged (429, 503, no answer), in the current phase. */
let refused = 0;
const batch = () => ({ records: Array.from({ length: BATCH }, () => verifiedRecord(`resp-${process.pid}-${++nextId}`, `resp-run-${Math.floor(nextId / 50)}`)) });

async function main() {
  const url = values["database-url"] ?? `file:${path.join(mkdtempSync(path.join(os.tmpdir(), "bench-responsive-")), "bench.db")}`;
  const { base, token, server } = await startBenchServer(url, "ingest,verify,read");
  const send = async (): Promise<number> => {
    try {
      const res = await fetch(`${base}/api/v1/receipts`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(batch()) });
      await res.arrayBuffer();
      if (res.status === 200 || res.status === 201) return BATCH;
      refused++; // a 429 or 503: not acknowledged
      return 0;
    } catch {
      refused++; // not answered: not acknowledged
      return 0;
    }
  };
  try {
    for (let sent = 0; sent < PRELOAD; sent += BATCH) await send();
    const cookie = await signIn(base, "bench@bench.test", "bench-password-123");
    const targets: { path: string; headers: Record<string, string> }[] = [
      { path: "/p/default/operations", headers: { cookie } },
      { path: "/p/default/review", headers: { cookie } },
      { path: "/api/v1/operations?limit=50", headers: { authorization: `Bearer ${token}` } },
    ];
    // The reviewer: one request after another, the three in turn.
    const reviewer = async (): Promise<number[]> => {
      const ms: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const t = targets[i % targets.length];
        const t0 = performance.now();
        const res = await fetch(base + t.path, { headers: t.headers, redirect: "manual" });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${t.path}: HTTP ${res.status} (the reviewer's session or token was refused)`);
        ms.push(performance.now() - t0);
      }
      return ms;
    };
    // Ingest beside the reviewer until it is done: paced at `rate` receipts a second, or `loops` unpaced loops.
    const phase = async (load: { rate: number } | { loops: number } | null) => {
      let stop = false;
      let acked = 0;
      refused = 0;
      const t0 = performance.now();
      const loaders: Promise<void>[] = [];
      if (load && "rate" in load) {
        const every = (1000 * BATCH) / load.rate;
        loaders.push(
          (async () => {
            const inflight = new Set<Promise<void>>();
            for (let k = 0; !stop; k++) {
              const due = t0 + k * every;
              const wait = due - performance.now();
              if (wait > 0) await new Promise((r) => setTimeout(r, wait));
              const p: Promise<void> = send().then((n) => void (acked += n));
              inflight.add(p);
              void p.finally(() => inflight.delete(p));
              if (inflight.size > 64) await Promise.race(inflight);
            }
            await Promise.all(inflight);
          })(),
        );
      } else if (load) {
        for (let l = 0; l < load.loops; l++)
          loaders.push(
            (async () => {
              // Not `acked += await send()`: that reads `acked` before the await, and four loops
              // overwrote each other's counts (the first baseline counted a quarter of what was acknowledged).
              while (!stop) {
                const n = await send();
                acked += n;
              }
            })(),
          );
      }
      const ms = await reviewer();
      stop = true;
      await Promise.all(loaders);
      const seconds = (performance.now() - t0) / 1000;
      const sorted = [...ms].sort((a, b) => a - b);
      return { rate: acked / seconds, refused, p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
    };
    // Warm: each page rendered and each query planned once before anything is timed.
    for (let i = 0; i < 2; i++) for (const t of targets) await (await fetch(base + t.path, { headers: t.headers, redirect: "manual" })).arrayBuffer();
    const rows: { load: string; rate: number; refused: number; p50: number; p95: number }[] = [];
    const idle = await phase(null);
    rows.push({ load: "none", ...idle });
    for (const rate of PACED) rows.push({ load: `paced, ${rate.toLocaleString("en")}/s`, ...(await phase({ rate })) });
    if (LOOPS) rows.push({ load: `${LOOPS} loop${LOOPS === 1 ? "" : "s"} of ${BATCH}-record batches, unpaced`, ...(await phase({ loops: LOOPS })) });
    console.log(`\nbench:responsive — ${url.startsWith("file:") ? "SQLite" : "PostgreSQL"}, ${PRELOAD.toLocaleString("en")} operations preloaded, ${SAMPLES} page requests a phase (operations page, review queue, list API in turn)\n`);
    console.log("| ingest load | receipts/s acknowledged | ingest requests refused | page p50 | page p95 | p95 ÷ idle p95 |");
    console.log("|---|---:|---:|---:|---:|---:|");
    for (const r of rows) console.log(`| ${r.load} | ${r.load === "none" ? "—" : Math.round(r.rate).toLocaleString("en")} | ${r.load === "none" ? "—" : r.refused} | ${Math.round(r.p50)} ms | ${Math.round(r.p95)} ms | ${(r.p95 / idle.p95).toFixed(1)}× |`);
  } finally {
    await stopBenchServer(server);
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
