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
    seconds: { type: "string", default: "10" },
    "reviewer-rate": { type: "string", default: "5" },
    paced: { type: "string", default: "1000,3000" },
    loops: { type: "string", default: "4" },
    "database-url": { type: "string" },
    modes: { type: "string", default: "off,first,on" },
  },
});
/**
 * The levers of issue 51, each mode on a database of its own, in one run: `off` is ingest as it
 * was before (RECONCILE_INTERACTIVE_SLICE_MS=0: no interactive-first, lib/store/db/priority.ts;
 * RECONCILE_SQLITE_WRITER=inline: SQLite's ingest connection on the request thread); `first`
 * interactive-first alone (the connection inline); `on` the defaults (both).
 */
const MODE_ENV: Record<string, Record<string, string>> = {
  off: { RECONCILE_INTERACTIVE_SLICE_MS: "0", RECONCILE_SQLITE_WRITER: "inline" },
  first: { RECONCILE_INTERACTIVE_SLICE_MS: "", RECONCILE_SQLITE_WRITER: "inline" },
  on: { RECONCILE_INTERACTIVE_SLICE_MS: "", RECONCILE_SQLITE_WRITER: "" },
};
const MODES = values.modes!.split(",").filter(Boolean);
for (const m of MODES) if (!MODE_ENV[m]) throw new Error(`--modes takes off, first and on (comma-separated), not ${m}`);
const PRELOAD = Number(values.preload);
const SAMPLES = Number(values.samples);
/**
 * A phase lasts at least this long, and ingest's rate is what was acknowledged within it: every
 * mode measures ingest over the same window from the same database size (a phase whose pages
 * took a second each once ran ten times longer than one whose pages were quick, on a database
 * growing all the while), and the reviewer goes on until it has --samples requests.
 */
const WINDOW_MS = 1000 * Number(values.seconds);
/**
 * The reviewer's pace: at most this many requests a second, each sent when the one before has
 * been answered and its slot has come (a person reads a page before the next; 5/s is already
 * faster than one). 0: one request after another, without a pause: a load of its own, whose
 * demand on the server's one thread grows as its pages get quicker, taken from ingest.
 */
const REVIEWER_RATE = Number(values["reviewer-rate"]);
const PACED = values.paced!.split(",").filter(Boolean).map(Number);
const LOOPS = Number(values.loops);
const BATCH = 100;
for (const [name, n] of [["--preload", PRELOAD], ["--samples", SAMPLES], ["--loops", LOOPS], ["--seconds", Number(values.seconds)], ["--reviewer-rate", REVIEWER_RATE], ...PACED.map((r) => ["--paced", r] as const)] as const) {
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} takes a whole number ≥ 0, not ${n}`);
}

let nextId = 0;
/** Ingest requests not acknowledged (429, 503, no answer), in the current phase. */
let refused = 0;
const batch = () => ({ records: Array.from({ length: BATCH }, () => verifiedRecord(`resp-${process.pid}-${++nextId}`, `resp-run-${Math.floor(nextId / 50)}`)) });

type Row = { load: string; rate: number; refused: number; p50: number; p95: number };

/** One server, on a database of its own, with interactive-first `mode`: the phases' rows. */
async function measure(mode: string, url: string): Promise<Row[]> {
  const { base, token, server, email } = await startBenchServer(url, "ingest,verify,read", MODE_ENV[mode]);
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
    const cookie = await signIn(base, email, "bench-password-123");
    const targets: { path: string; headers: Record<string, string> }[] = [
      { path: "/p/default/operations", headers: { cookie } },
      { path: "/p/default/review", headers: { cookie } },
      { path: "/api/v1/operations?limit=50", headers: { authorization: `Bearer ${token}` } },
    ];
    // The reviewer: one request after another, the three in turn.
    const reviewer = async (since: number): Promise<number[]> => {
      const ms: number[] = [];
      for (let i = 0; i < SAMPLES || performance.now() - since < WINDOW_MS; i++) {
        const t = targets[i % targets.length];
        const slot = since + (REVIEWER_RATE ? (1000 * i) / REVIEWER_RATE : 0);
        if (slot > performance.now()) await new Promise((r) => setTimeout(r, slot - performance.now()));
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
      const count = (n: number) => {
        if (performance.now() - t0 <= WINDOW_MS) acked += n;
      };
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
              const p: Promise<void> = send().then(count);
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
                count(n);
              }
            })(),
          );
      }
      const ms = await reviewer(t0);
      stop = true;
      await Promise.all(loaders);
      const sorted = [...ms].sort((a, b) => a - b);
      return { rate: acked / (WINDOW_MS / 1000), refused, p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
    };
    // Warm: each page rendered and each query planned once before anything is timed.
    for (let i = 0; i < 2; i++) for (const t of targets) await (await fetch(base + t.path, { headers: t.headers, redirect: "manual" })).arrayBuffer();
    const rows: Row[] = [];
    const idle = await phase(null);
    rows.push({ load: "none", ...idle });
    for (const rate of PACED) rows.push({ load: `paced, ${rate.toLocaleString("en")}/s`, ...(await phase({ rate })) });
    if (LOOPS) rows.push({ load: `${LOOPS} loop${LOOPS === 1 ? "" : "s"} of ${BATCH}-record batches, unpaced`, ...(await phase({ loops: LOOPS })) });
    return rows;
  } finally {
    await stopBenchServer(server);
  }
}

async function main() {
  const pg = values["database-url"];
  if (pg && MODES.length > 1) throw new Error("with --database-url, one mode a run (--modes on or --modes off): each mode needs an empty database of its own");
  const results: { mode: string; rows: Row[] }[] = [];
  for (const mode of MODES) {
    const url = pg ?? `file:${path.join(mkdtempSync(path.join(os.tmpdir(), "bench-responsive-")), "bench.db")}`;
    results.push({ mode, rows: await measure(mode, url) });
  }
  console.log(`\nbench:responsive — ${pg ? "PostgreSQL" : "SQLite"}, ${PRELOAD.toLocaleString("en")} operations preloaded; a phase: ${values.seconds} s and at least ${SAMPLES} page requests (operations page, review queue, list API in turn), ${REVIEWER_RATE ? `at most ${REVIEWER_RATE} a second` : "one after another"}; receipts/s acknowledged within the phase's first ${values.seconds} s\n`);
  console.log("| interactive-first | ingest load | receipts/s acknowledged | ingest requests refused | page p50 | page p95 | p95 ÷ idle p95 |");
  console.log("|---|---|---:|---:|---:|---:|---:|");
  for (const { mode, rows } of results) {
    const idle = rows[0];
    for (const r of rows) console.log(`| ${mode} | ${r.load} | ${r.load === "none" ? "—" : Math.round(r.rate).toLocaleString("en")} | ${r.load === "none" ? "—" : r.refused} | ${Math.round(r.p50)} ms | ${Math.round(r.p95)} ms | ${(r.p95 / idle.p95).toFixed(1)}× |`);
  }
  const off = results.find((r) => r.mode === "off")?.rows;
  for (const { mode, rows } of results) {
    if (!off || mode === "off") continue;
    console.log(`\n${mode} against off, same run:`);
    for (let i = 1; i < rows.length; i++) console.log(`- ${rows[i].load}: receipts/s acknowledged ${((100 * rows[i].rate) / off[i].rate).toFixed(0)} % of off's; page p95 ÷ idle p95 ${(rows[i].p95 / rows[0].p95).toFixed(1)}× (off: ${(off[i].p95 / off[0].p95).toFixed(1)}×)`);
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
