/**
 * `bench:search` — the free-text search query alone, on an index of N operations (default a
 * million), without seeding the whole chain (bench:ui seeds a million in ~45 min on SQLite).
 *
 *   npm run bench:search -- [--operations N] [--db PATH | --database-url URL] [--samples N]
 *
 * Fills only `operation_search` (after the project's own migrations) with the search documents
 * of bench:ui's generated operations (lib/bench/ui/generator.ts: the same tools, targets, params
 * and evidence, derived by the real deriveOperation and written by the real writeSearchRows),
 * then times `searchOperations` — the id-prefix lookup (on an empty operation_keys here) and the
 * ranked full-text query — for words of every frequency. What it does not time: the list's
 * fetch of up to 500 view rows and the snippets (bench:ui times the whole list call).
 * A database that already holds N search rows is reused.
 */
import { parseArgs } from "node:util";
import { deployMigrations } from "@/lib/cli/schema-engine";
import { deriveOperation, type StoredStage } from "@/lib/domain/operation";
import { searchSourceOf } from "@/lib/domain/search";
import { disconnect, reader, writeTransaction } from "@/lib/store/db/db";
import { searchOperations, searchRows, writeSearchRows } from "@/lib/store/projection/search-index";
import type { SearchSource } from "@/lib/domain/search";
import { Generator, type Rec } from "./ui/generator";
import { fmtTime, log } from "./ui/log";
import { measure, printTable, type Row } from "./ui/measure";
import { openBench } from "./ui/bench-db";

const { values } = parseArgs({
  options: {
    operations: { type: "string", default: "1000000" },
    db: { type: "string" },
    "database-url": { type: "string" },
    samples: { type: "string", default: "100" },
  },
});
const N = Number(values.operations);
const SAMPLES = Math.max(1, Number(values.samples));

/** The stage records an ingest of this generated operation would store (envelope on the first). */
function stagesOf(first: Rec, late: Rec | null): StoredStage[] {
  const at = String((first.receipt as Rec).observed_at);
  const envelope = Object.fromEntries(["tool", "agent", "trajectory_id", "depends_on", "claimed_outcome", "idempotency"].filter((k) => k in first).map((k) => [k, first[k]]));
  const stages: StoredStage[] = [];
  const push = (stage: StoredStage["stage"], data: Rec) => stages.push({ seq: stages.length + 1, stage, observed_at: (data.observed_at as string) ?? null, recorded_at: at, data, envelope: stages.length ? null : envelope });
  push("intent", first.intent as Rec);
  push("receipt", first.receipt as Rec);
  for (const r of [first, late]) {
    if (!r) continue;
    for (const read of (r.canonical_read as Rec[] | undefined) ?? []) push("canonical_read", read);
    if (r.side_effects) push("side_effects", r.side_effects as unknown as Rec);
  }
  return stages;
}

async function fill(from: number) {
  const gen = new Generator(N);
  for (let i = 0; i < from; i++) gen.next(); // the same sequence as a fresh fill
  const t0 = performance.now();
  let last = t0;
  const BATCH = 5000;
  for (let done = from; done < N; ) {
    const rows: { createdSeq: number; source: SearchSource }[] = [];
    for (let i = 0; i < BATCH && done + i < N; i++) {
      const { first, late } = gen.next();
      const id = String(first.operation_id);
      const stages = stagesOf(first, late);
      rows.push({ createdSeq: done + i + 1, source: searchSourceOf(id, stages, deriveOperation(id, stages)) });
    }
    await writeTransaction((tx) => writeSearchRows(tx, searchRows(rows), []));
    done += rows.length;
    if (performance.now() - last > 5000) {
      last = performance.now();
      const rate = (done - from) / ((last - t0) / 1000);
      log(`  ${done.toLocaleString()}/${N.toLocaleString()} search rows · ${Math.round(rate).toLocaleString()}/s · ETA ${fmtTime((N - done) / rate)}`);
    }
  }
  log(`filled in ${fmtTime((performance.now() - t0) / 1000)}`);
}

async function main() {
  const { bench, url, reuseHint } = openBench({ db: values.db, databaseUrl: values["database-url"] });
  await deployMigrations(url);
  const held = await bench.count("operation_search");
  bench.close();
  if (held > N) throw new Error(`it holds ${held.toLocaleString()} search rows, more than --operations ${N}: ${reuseHint}`);
  if (held < N) {
    log(`filling operation_search of ${bench.where} with ${(N - held).toLocaleString()} generated operations' documents…`);
    await fill(held);
  } else log(`reusing ${bench.where}: ${held.toLocaleString()} search rows`);
  await bench.settle();
  bench.close();

  const db = await reader();
  const run = (q: (i: number) => string) => async (i: number) => (await searchOperations(db, q(i), 500)).ids.length;
  console.log(`\nsearchOperations alone · ${await bench.kind()} · ${N.toLocaleString()} search rows · ${SAMPLES} samples after 10 warm-up calls\n`);
  const rows: Row[] = [];
  const m = async (name: string, q: (i: number) => string) => rows.push(await measure(name, 100, run(q), SAMPLES, 10));
  await m("'run' (95 %: every trajectory)", () => "run");
  await m("'billing' (1 in 3: an agent)", () => "billing");
  await m("'publish' (1 in 7: a tool)", () => "publish");
  await m("'publ*' (a prefix of the above, asked for)", () => "publ*");
  await m("'run*' (a prefix of the 95 % word)", () => "run*");
  await m("'<n>' (a number 0–499, ~1 in 300)", (i) => String((i * 37) % 500));
  await m("'resource <n>' (1 in 500)", (i) => `resource ${(i * 37) % 500}`);
  await m("'db-<n>' (a params value, ~1 in 35,000)", (i) => `db-${(i * 131) % 5000}`);
  await m("'nowhere' (no match)", () => "nowhere");
  printTable(rows);
  await disconnect();
}

main().catch(async (e) => {
  console.error(e);
  await disconnect().catch(() => {});
  process.exit(1);
});
