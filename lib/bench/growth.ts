/**
 * bench:growth — does ingest slow down as the data grows? (issue 17, part 1)
 *
 * Ingests bench:ui's generated operations through the real ingest use case (`ingestRecords`,
 * what POST /api/v1/receipts runs after validation; HTTP's own cost does not grow with the data,
 * bench:ingest measures it) into one database, in stages: it fills the database up to each
 * stage, then measures a window of `--window` operations there and prints, per stage,
 * records/s, the ratio to the first stage, and the bytes written per record (SQLite: what this
 * process wrote to the WAL and the database file, from /proc/self/io; PostgreSQL: the WAL the
 * server wrote, from pg_stat_wal). With `--attribute` (SQLite), it also says which b-trees the
 * written pages belong to.
 *
 *   npm run bench:growth -- [--db FILE | --database-url postgresql://…] [--stages 0,1000000,3000000]
 *                           [--window 20000] [--batch 100] [--warmup 2000] [--attribute]
 *
 * A database that already holds data is added to (bench:ui's million, say): stages below what
 * it holds are skipped, and the windows measure at the sizes it reaches.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { deployMigrations } from "@/lib/cli/schema-engine";
import { disconnect, writer } from "@/lib/store/db/db";
import { openBench, SqliteBench } from "./ui/bench-db";
import { fmtTime, log } from "./ui/log";
import { Feeder, ingestBatch } from "./ui/seed";
import { WalTap } from "./growth/wal-tap";

const { values } = parseArgs({
  options: {
    db: { type: "string" },
    "database-url": { type: "string" },
    stages: { type: "string", default: "0,1000000,3000000" },
    window: { type: "string", default: "20000" },
    batch: { type: "string", default: "100" },
    attribute: { type: "boolean", default: false },
    warmup: { type: "string", default: "2000" },
  },
});
const STAGES = values.stages.split(",").map(Number);
const WINDOW = Number(values.window);
const BATCH = Number(values.batch);
const WARMUP = Number(values.warmup);
if (STAGES.some((s) => !Number.isInteger(s) || s < 0)) throw new Error("--stages: whole numbers of operations, comma-separated");
if (!Number.isInteger(WINDOW) || WINDOW < 1000) throw new Error("--window must be a whole number ≥ 1000");
if (!Number.isInteger(BATCH) || BATCH < 1 || BATCH > 2000) throw new Error("--batch must be 1–2000");
if (!Number.isInteger(WARMUP) || WARMUP < 0) throw new Error("--warmup must be a whole number of operations");

type Row = { stage: number; held: number; records: number; seconds: number; bytes: number | null; wal: Map<string, number> | null; sizeMb: number };

/** Bytes written so far: this process's writes (SQLite) or the server's WAL (PostgreSQL). */
async function bytesWritten(sqlite: boolean): Promise<number | null> {
  if (sqlite) {
    const m = /^wchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"));
    return m ? Number(m[1]) : null;
  }
  const rows = await (await writer()).$queryRawUnsafe<{ b: string }[]>("SELECT wal_bytes::text AS b FROM pg_stat_wal");
  return rows.length ? Number(rows[0].b) : null;
}

async function main() {
  const { bench, url } = openBench({ db: values.db, databaseUrl: values["database-url"] });
  const sqlite = bench instanceof SqliteBench;
  if (values.attribute && !sqlite) throw new Error("--attribute reads SQLite's WAL: use it with --db");
  await deployMigrations(url);
  let held = await bench.count("operations");
  bench.close();
  const stages = [...new Set(STAGES)].sort((a, b) => a - b);
  const last = stages[stages.length - 1];
  // Another seed than bench:ui's, so operations added to its database are new ones; calls 10 ms
  // apart, ending an hour ago: the times grow as the operations arrive, as in a live deployment
  // (bench:ui's 30 days would put a small window's calls all over the time indexes).
  const total = Math.max(0, last - held) + WINDOW * stages.length + WARMUP;
  const feed = new Feeder(total, 20261201 + held, total * 10);
  const tap = values.attribute ? new WalTap(bench.where) : null;
  console.log(`bench:growth · ${await bench.kind()} · ${bench.where} · holds ${held.toLocaleString()} operations`);
  console.log(`stages ${stages.map((s) => s.toLocaleString()).join(", ")} · window ${WINDOW.toLocaleString()} operations · ${BATCH} records a transaction`);

  // Warm-up, not measured: the first window would otherwise also pay for compiling the code,
  // opening connections and preparing statements, and understate the first stage's rate (which
  // every ratio divides by). The operations count towards the size.
  if (WARMUP > 0) {
    log(`warming up with ${WARMUP.toLocaleString()} operations (not measured)…`);
    const start = feed.made;
    for (let b = feed.next(BATCH, start + WARMUP); b; b = feed.next(BATCH, start + WARMUP)) await ingestBatch(b, "bench-growth");
    held += feed.made - start;
  }

  const rows: Row[] = [];
  for (const stage of stages) {
    if (held > stage) {
      log(`stage ${stage.toLocaleString()}: the database already holds ${held.toLocaleString()}; measuring at that size instead`);
    }
    if (held < stage) {
      log(`filling to ${stage.toLocaleString()} operations…`);
      const t0 = performance.now();
      let report = t0;
      const start = feed.made;
      const target = start + (stage - held);
      for (let b = feed.next(BATCH, target); b; b = feed.next(BATCH, target)) {
        await ingestBatch(b, "bench-growth");
        tap?.poll();
        const now = performance.now();
        if (now - report > 10_000) {
          report = now;
          const made = held + feed.made - start;
          const rate = (feed.made - start) / ((now - t0) / 1000);
          log(`  ${made.toLocaleString()}/${stage.toLocaleString()} operations · ${Math.round(rate).toLocaleString()} operations/s · ETA ${fmtTime((stage - made) / rate)}`);
        }
      }
      held += feed.made - start;
    }
    tap?.reset();
    const records0 = feed.records;
    const bytes0 = await bytesWritten(sqlite);
    const t0 = performance.now();
    const start = feed.made;
    for (let b = feed.next(BATCH, start + WINDOW); b; b = feed.next(BATCH, start + WINDOW)) {
      await ingestBatch(b, "bench-growth");
      tap?.poll();
    }
    const seconds = (performance.now() - t0) / 1000;
    const bytes1 = await bytesWritten(sqlite);
    const records = feed.records - records0;
    const wal = tap ? tap.byTree() : null;
    const row: Row = { stage, held, records, seconds, bytes: bytes0 !== null && bytes1 !== null ? bytes1 - bytes0 : null, wal, sizeMb: await bench.sizeMb() };
    rows.push(row);
    held += feed.made - start;
    log(`  at ${row.held.toLocaleString()}: ${Math.round(records / seconds).toLocaleString()} records/s`);
  }

  const base = rows[0].records / rows[0].seconds;
  console.log("");
  console.log("| operations held | records | records/s | vs first | KB written / record | database MB |");
  console.log("|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    const rate = r.records / r.seconds;
    const kb = r.bytes === null ? "–" : (r.bytes / r.records / 1024).toFixed(1);
    console.log(`| ${r.held.toLocaleString()} | ${r.records.toLocaleString()} | ${Math.round(rate).toLocaleString()} | ${Math.round((rate / base) * 100)} % | ${kb} | ${r.sizeMb.toFixed(0)} |`);
  }
  if (rows.some((r) => r.wal)) {
    console.log("");
    console.log("Pages written per 100 records, by b-tree (WAL frames; an index's name is its table's when it is the table):");
    const names = [...new Set(rows.flatMap((r) => [...(r.wal ?? new Map()).keys()]))];
    console.log(`| b-tree | ${rows.map((r) => `at ${r.held.toLocaleString()}`).join(" | ")} |`);
    console.log(`|---|${rows.map(() => "---:").join("|")}|`);
    for (const name of names) {
      console.log(`| ${name} | ${rows.map((r) => ((100 * (r.wal?.get(name) ?? 0)) / r.records).toFixed(1)).join(" | ")} |`);
    }
  }
  await disconnect();
}

main().catch(async (e) => {
  console.error(e);
  await disconnect().catch(() => {});
  process.exit(1);
});
