/**
 * `npm run bench:hot`: the JavaScript that batched ingest runs for each receipt on the server's
 * one thread, step by step, without a server or a database: the same functions as the request
 * path, on bench:ingest's record (bench-record.ts), in batches of 100, as for new operations.
 * Prints microseconds a receipt for each step, the best of several rounds (the machine's noise
 * moves whole HTTP runs by ±15 %, so a step's cost is read here, not there: docs/BENCHMARKS.md).
 * Asserts nothing. Options: --receipts N (default 20,000), --rounds N (default 10).
 *
 * Not measured here: HTTP, the database driver, building the statements' JSON, the answers'
 * JSON, and the garbage collector's share of them (bench:ingest's CPU line has the whole).
 */
import { parseArgs } from "node:util";
// The search vectors are built for PostgreSQL only (search-index.ts asks the database URL).
process.env.DATABASE_URL ??= "postgresql://bench@127.0.0.1/unused";

const { values } = parseArgs({ options: { receipts: { type: "string", default: "20000" }, rounds: { type: "string", default: "10" } } });
const RECEIPTS = Math.max(100, Number(values.receipts));
const ROUNDS = Math.max(1, Number(values.rounds));
const BATCH = 100;

async function main() {
  const { benchRecord } = await import("./bench-record");
  const { parseJsonBytes } = await import("../api/body");
  const { validate } = await import("../api/ingest");
  const { prepareRecord } = await import("../domain/stages");
  const { systemSender } = await import("../domain/trust");
  const { decideBatch, planWrite } = await import("@/lib/store/ingest/records");
  const { linkEntries } = await import("@/lib/store/chain/chain");
  type ValidRecord = import("@/lib/store/ingest/records").ValidRecord;

  const sender = systemSender("bench");
  const bodies: Buffer[] = [];
  for (let b = 0; b < RECEIPTS / BATCH; b++) {
    const records = Array.from({ length: BATCH }, (_, i) => benchRecord(`bench-hot-${b * BATCH + i}`, `bench-run-${Math.floor((b * BATCH + i) / 10)}`));
    bodies.push(Buffer.from(JSON.stringify({ records })));
  }
  const n = bodies.length * BATCH;
  const noPace = async () => {};

  /** One pass over every batch, each step timed; returns ms per step. */
  async function pass() {
    const ms = { parse: 0, check: 0, prepare: 0, decide: 0, link: 0, plan: 0 };
    let t = 0;
    const lap = (step: keyof typeof ms) => {
      const now = performance.now();
      ms[step] += now - t;
      t = now;
    };
    for (const body of bodies) {
      t = performance.now();
      const value = (await parseJsonBytes(body)) as { records: Record<string, unknown>[] };
      lap("parse");
      for (const raw of value.records) if (validate(raw, false, sender)) throw new Error("invalid record");
      lap("check");
      const valid: ValidRecord[] = value.records.map((raw, index) => ({ index, operationId: raw.operation_id as string, raw, sender, prepared: prepareRecord(raw) }));
      lap("prepare");
      const ids = [...new Set(valid.map((r) => r.operationId))];
      const decided = await decideBatch(valid, { ids, known: [], records: new Map() }, noPace);
      lap("decide");
      const head = { seq: 1000, hash: "0".repeat(64), records: 1000 };
      const linked = await linkEntries(decided.entries, { chainOfEntry: decided.entries.map(() => 0), heads: new Map([[0, head]]), seqs: null, recordedAt: new Date().toISOString(), pace: noPace });
      lap("link");
      planWrite(decided, linked.records);
      lap("plan");
    }
    return ms;
  }

  const best = { parse: Infinity, check: Infinity, prepare: Infinity, decide: Infinity, link: Infinity, plan: Infinity };
  let bestTotal = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const ms = await pass();
    for (const k of Object.keys(best) as (keyof typeof best)[]) best[k] = Math.min(best[k], ms[k]);
    bestTotal = Math.min(bestTotal, Object.values(ms).reduce((a, b) => a + b, 0));
  }
  const us = (ms: number) => ((ms * 1000) / n).toFixed(1).padStart(6);
  console.log(`Reconcile ingest's JavaScript a receipt (bench:ingest's record, batches of ${BATCH}, new operations) · ${n.toLocaleString()} receipts · best of ${ROUNDS} rounds · node ${process.version}\n`);
  const label: Record<keyof typeof best, string> = {
    parse: "body: UTF-8, JSON.parse, duplicate keys",
    check: "record: shape limits, schema, rights",
    prepare: "split into stages, canonical JSON",
    decide: "decide against the basis",
    link: "chain records hashed and linked",
    plan: "projection, view rows, search rows",
  };
  for (const k of Object.keys(best) as (keyof typeof best)[]) console.log(`  ${label[k].padEnd(40)} ${us(best[k])} µs`);
  console.log(`  ${"all steps (best whole round)".padEnd(40)} ${us(bestTotal)} µs`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
