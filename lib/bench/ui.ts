/**
 * `bench:ui` — how fast the operator pages' data answers with a million operations.
 *
 *   tsx --conditions=react-server lib/bench/ui.ts [--operations N] [--db PATH | --database-url URL]
 *        [--samples N] [--warmup N] [--batch N] [--skip-verify] [--rebuild] [--trajectory-samples N]
 *
 * 1. Makes an embedded SQLite database (a fresh temp folder, or `--db PATH`), or uses the
 *    PostgreSQL database of `--database-url postgresql://…` (or env BENCH_DATABASE_URL); one
 *    that already holds ≥ N operations is reused, so reruns skip seeding. It is migrated with
 *    the project's own `deployMigrations`. When that applies a migration to a reused database
 *    (or with `--rebuild`), the projection is rebuilt with the store's `rebuildProjections`, so
 *    derived columns added since the seed hold what today's ingest would have written. After
 *    seeding or rebuilding, SQLite's WAL is checkpointed; PostgreSQL's tables are VACUUM
 *    ANALYZEd (what autovacuum would soon do), so plans and index-only scans see the real data.
 * 2. Seeds N operations (default 1,000,000) through the real ingest use case (`ingestRecords`,
 *    the function behind POST /api/v1/receipts, in batches of `--batch` records): every table
 *    the pages read (chain_records with its hash chain, operations, operation_views,
 *    operation_keys, operation_edges) is written exactly as production writes it. The data looks
 *    like the demo: ≈72 % verified, the rest uncertain / divergent / rejected over every failure
 *    category, 7 tools, 3 agents, interleaved trajectories of ~6 steps with depends_on links,
 *    receipts, reads, side effects, and ~10 % of operations whose read arrives in a later
 *    request (the projection-update path). The chain is then verified link by link.
 * 3. Times, in process, the store functions the pages call (warm-up, then `--samples` each):
 *    p50 / p95 / p99 in ms against the issue's targets.
 * 4. Prints each page's first-load JavaScript (gzip) from the existing `.next/` build, read only.
 *
 * Server-side data time only: no HTTP, no React rendering, no session lookup. The parts are in
 * lib/bench/ui/: the data generator, seeding, the benchmark's own reads per database, timing,
 * and the first-load JavaScript report.
 */
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { mulberry32 } from "@/lib/domain/demo-data";
import { deployMigrations } from "@/lib/cli/schema-engine";
import { assigneesOf } from "@/lib/store/review/assignments";
import { disconnect } from "@/lib/store/db/db";
import { getOperation } from "@/lib/store/queries/get-operation";
import { getTrajectory, listTrajectories } from "@/lib/store/queries/get-trajectory";
import { listOperations, listQuerySchema } from "@/lib/store/queries/list-operations";
import { knownTools, outcomeCounts, periodStart, reviewCounts, silentFailureRate, topDivergentTools } from "@/lib/store/queries/overview";
import { metricsQuerySchema, readMetrics } from "@/lib/store/queries/metrics";
import { rebuildProjections } from "@/lib/store/projection/rebuild";
import { openBench, SqliteBench, type ChainCheck } from "./ui/bench-db";
import { firstLoadJs } from "./ui/first-load-js";
import { TOOLS } from "./ui/generator";
import { fmtTime, log } from "./ui/log";
import { BUDGET_MS, measure as measureQuery, printTable, WARMUP_BUDGET_MS, type Row } from "./ui/measure";
import { seed } from "./ui/seed";

const { values } = parseArgs({
  options: {
    operations: { type: "string", default: "1000000" },
    db: { type: "string" },
    "database-url": { type: "string" },
    samples: { type: "string", default: "200" },
    warmup: { type: "string", default: "20" },
    batch: { type: "string", default: "1000" },
    "skip-verify": { type: "boolean", default: false },
    rebuild: { type: "boolean", default: false },
    "trajectory-samples": { type: "string", default: "20" },
  },
});
const OPERATIONS = Number(values.operations);
const SAMPLES = Math.max(1, Number(values.samples));
const WARMUP = Math.max(0, Number(values.warmup));
const BATCH = Math.min(2000, Math.max(1, Number(values.batch)));
if (!Number.isInteger(OPERATIONS) || OPERATIONS < 100) throw new Error("--operations must be a whole number ≥ 100");

const root = path.resolve(import.meta.dirname, "../..");

/** Times `fn` with this run's samples and warm-up unless told otherwise (ui/measure.ts). */
const measure = (name: string, target: number | null, fn: (i: number) => Promise<number>, samples = SAMPLES, warmup = WARMUP) =>
  measureQuery(name, target, fn, samples, warmup);

async function main() {
  const { bench, url, fresh: freshFile, reuseHint } = openBench({ db: values.db, databaseUrl: values["database-url"] });
  const where = bench.where;
  const { applied } = await deployMigrations(url);

  const held = await bench.count("operations");
  bench.close();
  const fresh = freshFile ?? held === 0;
  let seeding: Awaited<ReturnType<typeof seed>> | null = null;
  let rebuilt: { seconds: number; why: string } | null = null;
  if (held >= OPERATIONS) {
    log(`reusing ${where}: it already holds ${held.toLocaleString()} operations`);
    if (applied.length || values.rebuild) {
      const why = applied.length ? `migrations ${applied.join(", ")} applied to the seeded database` : "--rebuild";
      log(`rebuilding the projection (${why})…`);
      const r0 = performance.now();
      let last = r0;
      await rebuildProjections((done) => {
        const now = performance.now();
        if (now - last < 5000) return;
        last = now;
        const rate = done / ((now - r0) / 1000);
        log(`  rebuilt ${done.toLocaleString()}/${held.toLocaleString()} operations · ${Math.round(rate).toLocaleString()}/s · ETA ${fmtTime((held - done) / rate)}`);
      });
      await bench.settle();
      rebuilt = { seconds: (performance.now() - r0) / 1000, why };
      log(`projection rebuilt in ${fmtTime(rebuilt.seconds)}`);
    }
  } else if (held > 0) {
    throw new Error(`${where} holds ${held.toLocaleString()} operations, fewer than --operations ${OPERATIONS}: ${reuseHint}`);
  } else {
    log(`seeding ${OPERATIONS.toLocaleString()} operations into ${where} through ingestRecords, ${BATCH} records per transaction…`);
    seeding = await seed(OPERATIONS, BATCH);
    await bench.settle();
    log(`seeded in ${fmtTime(seeding.seconds)} (${Math.round(seeding.records / seeding.seconds).toLocaleString()} records/s)`);
  }

  const tables = {
    chain_records: await bench.count("chain_records"),
    operations: await bench.count("operations"),
    operation_views: await bench.count("operation_views"),
    operation_keys: await bench.count("operation_keys"),
    operation_edges: await bench.count("operation_edges"),
    operation_search: await bench.count("operation_search"),
  };
  const mix = await bench.outcomeMix();
  const sizeMb = (await bench.sizeMb()).toFixed(0);

  let chain: ChainCheck | null = null;
  if (seeding && !values["skip-verify"]) {
    log("verifying the hash chain link by link…");
    const v0 = performance.now();
    chain = await bench.verifyChain();
    log(`chain ${chain.ok ? "intact" : "BROKEN"} (${((performance.now() - v0) / 1000).toFixed(0)} s)`);
    if (!chain.ok) throw new Error(`the seeded chain does not verify: ${chain.detail}`);
  }

  // Sample inputs, picked uniformly over the whole history (positions in insert order).
  const rnd = mulberry32(7);
  const maxOp = await bench.positions("operations");
  const maxView = await bench.positions("operation_views");
  const opPositions = Array.from({ length: SAMPLES + WARMUP }, () => 1 + Math.floor(rnd() * maxOp));
  const viewPositions = Array.from({ length: SAMPLES + WARMUP }, () => 1 + Math.floor(rnd() * maxView));
  const randomOps = await bench.operationsAt(opPositions);
  const randomTrajectories = await bench.trajectoriesFrom(viewPositions);
  const headCursor = await bench.maxCreatedSeq();
  const middleCursor = await bench.createdSeqAt(Math.floor(tables.operation_views / 2));
  bench.close();

  console.log(`\nReconcile UI data benchmark · ${os.cpus().length} cores · ${await bench.kind()} · node ${process.version}`);
  console.log(`database ${where} (${sizeMb} MB${fresh ? ", seeded by this run" : ""})`);
  console.log(`rows: ${Object.entries(tables).map(([t, n]) => `${t} ${n.toLocaleString()}`).join(" · ")}`);
  console.log(`effective outcomes: ${mix.map((m) => `${m.o} ${((m.n / tables.operation_views) * 100).toFixed(1)}%`).join(" · ")}`);
  if (seeding) {
    console.log(
      `seeding: ${seeding.records.toLocaleString()} ingest records (${seeding.stages.toLocaleString()} stage records) through ingestRecords in ${fmtTime(seeding.seconds)} · ` +
        `${Math.round(seeding.records / seeding.seconds).toLocaleString()} records/s`,
    );
    if (chain) console.log(`hash chain verified: ${chain.count.toLocaleString()} links intact, ${chain.detail}`);
  }
  if (rebuilt) console.log(`projection rebuilt (${rebuilt.why}) in ${fmtTime(rebuilt.seconds)}`);
  console.log(
    `each query: ${WARMUP} warm-up calls (at most ${WARMUP_BUDGET_MS / 1000} s), then ${SAMPLES} timed calls one after another (fewer, ≥ 20, when they would take over ${BUDGET_MS / 1000} s), in process (no HTTP, no rendering)\n`,
  );

  const list = (q: Record<string, string>) => async () => (await listOperations(listQuerySchema.parse(q))).items.length;
  const rows: Row[] = [];
  rows.push(await measure("list: first page", 100, list({})));
  rows.push(await measure("list: outcome=divergent", 100, list({ outcome: "divergent" })));
  rows.push(await measure("list: needs_review=true", 100, list({ needs_review: "true" })));
  rows.push(await measure("list: tool=<one of 7>", 100, async (i) => list({ tool: TOOLS[i % TOOLS.length] })()));
  rows.push(await measure("list: trajectory_id=<random>", 100, async (i) => list({ trajectory_id: randomTrajectories[i] })()));
  rows.push(await measure("list: q=<op id minus 2 chars>", 100, async (i) => list({ q: randomOps[i].slice(0, -2) })()));
  rows.push(await measure("list: q=<6-char prefix 'op-xxx'>", 100, async (i) => list({ q: randomOps[i].slice(0, 6) })()));
  // Wide enough to hit the search's 1,000-key cap at a million operations.
  rows.push(await measure("list: q=<5-char prefix 'op-xx'>", 100, async (i) => list({ q: randomOps[i].slice(0, 5) })()));
  // Free-text search (issue 19), ranked among the newest matches (search-index.ts): a word of
  // one tool in seven, its prefix, a target's two words (1 in 500), a params value (a few
  // operations), and a word that is nowhere.
  rows.push(await measure("search: a common word ('publish', 1 in 7)", 100, list({ q: "publish" })));
  rows.push(await measure("search: a prefix ('publ*')", 100, list({ q: "publ*" })));
  rows.push(await measure("search: two words ('resource <n>', 1 in 500)", 100, async (i) => list({ q: `resource ${(i * 37) % 500}` })()));
  rows.push(await measure("search: a params value ('db-<n>', a few)", 100, async (i) => list({ q: `db-${(i * 131) % 5000}` })()));
  rows.push(await measure("search: a common word + outcome=divergent", 100, list({ q: "insert", outcome: "divergent" })));
  rows.push(await measure("search: no match", 100, list({ q: "nowhere" })));
  rows.push(await measure("list: failure_category=4", 100, list({ failure_category: "4" })));
  rows.push(await measure("list: failure_category=1", 100, list({ failure_category: "1" })));
  rows.push(await measure("list: page from the middle (cursor)", 100, list({ cursor: String(middleCursor) })));
  rows.push(await measure("list: divergent from the middle", 100, list({ outcome: "divergent", cursor: String(middleCursor) })));
  rows.push(await measure("list: new-operations poll (newer_than)", null, list({ newer_than: String(headCursor), limit: "200" })));
  rows.push(await measure("getOperation(<random id>)", 50, async (i) => ((await getOperation(randomOps[i])) ? 1 : 0)));
  rows.push(await measure("getTrajectory(<random id>)", null, async (i) => (await getTrajectory(randomTrajectories[i]))?.steps.length ?? 0));
  rows.push(await measure("outcomeCounts() (all time)", null, async () => (await outcomeCounts()).total));
  // The overview page as it is now: four aggregates over the chosen period (90d: the widest).
  const since = periodStart(90);
  rows.push(await measure("outcomeCounts(90d)", null, async () => (await outcomeCounts(since)).total));
  rows.push(await measure("reviewCounts()", null, async () => (await reviewCounts()).total));
  rows.push(await measure("silentFailureRate(90d)", null, async () => (await silentFailureRate(since)).length));
  rows.push(await measure("topDivergentTools(90d)", null, async () => (await topDivergentTools(since)).length));
  rows.push(
    await measure("overview page data (the 4 above, Promise.all)", null, async () => {
      const [counts] = await Promise.all([outcomeCounts(since), reviewCounts(), silentFailureRate(since), topDivergentTools(since)]);
      return counts.total;
    }),
  );
  rows.push(
    await measure("review page data (counts, oldest call 50, assignees)", null, async () => {
      await reviewCounts();
      const { items } = await listOperations(listQuerySchema.parse({ needs_review: "true", by: "called", order: "oldest", limit: "50" }));
      await assigneesOf(items.map((i) => i.operation_id));
      return items.length;
    }),
  );
  rows.push(await measure("knownTools() (filter menu on /operations)", null, async () => (await knownTools()).length));
  rows.push(
    await measure("/operations first page incl. knownTools", 100, async () => {
      await knownTools(); // the page awaits the filter menu's tools, then renders the list
      return list({})();
    }),
  );
  // /metrics: Metrics 1–5 overall, per tool, agent and week, from metric_rollups (the 90-day
  // default and all time), and a figure's link (the operations behind Metric 2's numerator).
  const since90 = periodStart(90);
  rows.push(await measure("metrics page data (readMetrics, 90d)", 100, async () => (await readMetrics(metricsQuerySchema.parse({ since: since90 }))).operations));
  rows.push(await measure("readMetrics (all time, one tool)", 100, async () => (await readMetrics(metricsQuerySchema.parse({ tool: TOOLS[0] }))).operations));
  rows.push(await measure("list: a metric's link (silent failures, 90d)", 100, list({ metric: "silent_failure_rate", part: "hit", since: since90 })));
  rows.push(await measure("list: a metric's link (recall misses)", 100, list({ metric: "verification_recall", part: "miss" })));
  // Seconds per call at a million operations: a few samples say enough (--trajectory-samples).
  const trajectorySamples = Math.min(SAMPLES, Number(values["trajectory-samples"]));
  rows.push(await measure("listTrajectories() (/trajectories)", null, async () => (await listTrajectories()).length, trajectorySamples, 1));
  printTable(rows);
  console.log("");
  firstLoadJs(root);

  await disconnect();
  if (bench instanceof SqliteBench && !values.db) console.log(`\nthe database is kept for reruns: --db ${where}  (delete ${path.dirname(where)} when done)`);
}

main().catch(async (e) => {
  console.error(e);
  await disconnect().catch(() => {});
  process.exit(1);
});
