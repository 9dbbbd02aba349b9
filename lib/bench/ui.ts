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
 * Server-side data time only: no HTTP, no React rendering, no session lookup.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import vm from "node:vm";
import { gzipSync } from "node:zlib";
import Database from "better-sqlite3";
import { ChainVerifier, sha256Hex, type ChainVerdict } from "@/lib/domain/hash";
import { mulberry32 } from "@/lib/domain/demo-data";
import { operationRecordSchema } from "@/lib/domain/wire";
import { rebuildProjections } from "@/lib/store/rebuild-projections";
import { providerOf } from "@/lib/store/database";
import { disconnect, reader, writer } from "@/lib/store/db";
import { getOperation } from "@/lib/store/get-operation";
import { assigneesOf } from "@/lib/store/assignments";
import { getTrajectory, listTrajectories } from "@/lib/store/get-trajectory";
import { ingestRecords, type ValidRecord } from "@/lib/store/ingest-records";
import { systemSender } from "@/lib/domain/trust";
import { listOperations, listQuerySchema } from "@/lib/store/list-operations";
import { knownTools, outcomeCounts, periodStart, reviewCounts, silentFailureRate, topDivergentTools } from "@/lib/store/overview";
import { verifyStoredChain } from "@/lib/store/verify-chain";
import { deployMigrations } from "@/lib/cli/schema-engine";

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

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const root = path.resolve(import.meta.dirname, "../..");

/* ------------------------------------------------------------------------------------------ */
/* Data generator: deterministic, shaped like lib/domain/demo-data.ts                           */
/* ------------------------------------------------------------------------------------------ */

type Rec = Record<string, unknown>;


const TOOLS = ["social.publish", "db.insert", "storage.upload", "email.send", "crm.update", "ledger.post", "tickets.create"];
const AGENTS = [
  { name: "dvnc", version: "1.4.0" },
  { name: "ops-bot", version: "0.9.2" },
  { name: "billing-agent", version: "2.1.0" },
];
const READER = { identity: "reconcile-reader", account: "audit-ro", region: "eu-west-1", api_version: "2026-06" };
/** Trajectories open at once: steps of concurrent agent runs interleave in the chain. */
const ACTIVE_TRAJECTORIES = 64;
/** Share of operations whose canonical read arrives in a later request. */
const LATE_READ = 0.1;

type Trajectory = { id: string; left: number; steps: string[] };

class Generator {
  private rnd = mulberry32(20261130);
  private ids = new Set<string>();
  private active: Trajectory[] = [];
  private made = 0;
  private readonly start: number;
  private readonly span: number;

  constructor(private readonly total: number) {
    // Calls spread over the 30 days before the seed, so the overview's periods see them.
    this.span = 30 * 24 * 3600_000;
    this.start = Date.now() - this.span - 3600_000;
  }

  get count() {
    return this.made;
  }

  private hex(n: number): string {
    let s = "";
    while (s.length < n) s += Math.floor(this.rnd() * 0x1000000).toString(16).padStart(6, "0");
    return s.slice(0, n);
  }

  private unique(prefix: string, n: number): string {
    for (;;) {
      const id = `${prefix}${this.hex(n)}`;
      if (!this.ids.has(id)) {
        this.ids.add(id);
        return id;
      }
    }
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rnd() * xs.length)];
  }

  private trajectory(): Trajectory | null {
    if (this.rnd() < 0.05) return null; // a few operations belong to no run
    if (this.active.length < ACTIVE_TRAJECTORIES) {
      const t = { id: this.unique("run-", 10), left: 3 + Math.floor(this.rnd() * 7), steps: [] };
      this.active.push(t);
      return t;
    }
    return this.pick(this.active);
  }

  /** One operation: the record carrying its first stages, and the late read record if any. */
  next(): { first: Rec; late: Rec | null } {
    const i = this.made++;
    const id = this.unique("op-", 12);
    const at = (minutes: number) =>
      new Date(this.start + Math.floor((i / this.total) * this.span) + Math.floor(minutes * 60_000)).toISOString().replace(/\.\d{3}Z$/, "Z");
    const tool = this.pick(TOOLS);
    const [family, verb] = tool.split(".");
    const agent = this.pick(AGENTS);
    const t = this.trajectory();
    const depends_on: string[] = [];
    if (t && t.steps.length && this.rnd() < 0.35) {
      depends_on.push(t.steps[t.steps.length - 1]);
      if (t.steps.length > 1 && this.rnd() < 0.15) depends_on.push(t.steps[t.steps.length - 2]);
    }
    const fingerprint = `sha256:${sha256Hex(id)}`;
    const params = { object: `${family}-${Math.floor(this.rnd() * 5000)}`, amount: (Math.floor(this.rnd() * 100_000) / 100).toFixed(2) };
    const r = this.rnd();
    const rejected = r >= 0.96;
    const evidence = { object_id: `obj-${id.slice(3)}`, fingerprint };
    // Outcome mix as in the demo: 72 % verified; uncertain (unavailable, no read); divergent
    // (absent, mismatch, wrong tool, wrong params, partial); 4 % rejected.
    type Read = { status: string; after: number; evidence?: unknown };
    let reads: Read[];
    let receiptTool: string | undefined;
    let receiptParams: Rec = params;
    let partial = false;
    if (r < 0.72) reads = [{ status: "match", after: 2, evidence }];
    else if (r < 0.8) reads = [{ status: "unavailable", after: 2 }];
    else if (r < 0.87) reads = [{ status: "absent", after: 3 }];
    else if (r < 0.905) reads = [{ status: "mismatch", after: 3, evidence: { object_id: `obj-${id.slice(3)}` } }];
    else if (r < 0.91) {
      receiptTool = this.pick(TOOLS.filter((x) => x !== tool)); // category 1
      reads = [{ status: "mismatch", after: 2, evidence: { object_id: `obj-${id.slice(3)}`, fingerprint: `sha256:${sha256Hex(`other-${id}`)}` } }];
    } else if (r < 0.915) {
      receiptParams = { ...params, amount: "0.00" }; // category 2
      reads = [{ status: "absent", after: 2 }];
    } else if (r < 0.92) {
      partial = true; // category 3
      reads = [{ status: "match", after: 1, evidence }];
    } else if (r < 0.96) reads = [];
    else reads = this.rnd() < 0.5 ? [{ status: "absent", after: 1 }] : [];
    // A re-check now and then: a second read a little later, same verdict.
    if (reads.length && this.rnd() < 0.05) reads.push({ ...reads[0], after: reads[0].after + 10 });

    const record: Rec = {
      operation_id: id,
      ...(t ? { trajectory_id: t.id } : {}),
      ...(depends_on.length ? { depends_on } : {}),
      agent,
      tool: { name: tool, version: "1" },
      claimed_outcome: rejected ? "failure" : "success",
      intent: { target: `${family} resource ${Math.floor(this.rnd() * 500)}`, effect: `${verb} one object`, fingerprint, params },
      receipt: {
        status: rejected ? "rejected" : "accepted",
        receipt_id: `rcpt-${id.slice(3)}`,
        observed_at: at(0),
        ...(receiptTool ? { tool: receiptTool } : {}),
        params: receiptParams,
        environment: { endpoint: `https://api.example.test/${family}/${verb}`, region: "eu-west-1" },
        partial,
      },
    };
    if (this.rnd() < 0.5) record.idempotency = { enforced: true, key: id };
    const readRecords = reads.map((x) => ({
      status: x.status,
      observed_at: at(x.after),
      ...(x.evidence !== undefined ? { evidence: x.evidence } : {}),
      reader: READER,
    }));
    const sideEffects = this.rnd() < 0.3 ? [{ name: "quota counter decremented", status: this.rnd() < 0.9 ? "observed" : "not_observed" }] : null;

    let late: Rec | null = null;
    if (readRecords.length && this.rnd() < LATE_READ) {
      late = { operation_id: id, canonical_read: readRecords, ...(sideEffects ? { side_effects: sideEffects } : {}) };
    } else {
      if (readRecords.length) record.canonical_read = readRecords;
      if (sideEffects) record.side_effects = sideEffects;
    }
    if (t) {
      t.steps.push(id);
      if (--t.left === 0) this.active.splice(this.active.indexOf(t), 1);
    }
    return { first: record, late };
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Seeding through the real ingest use case                                                     */
/* ------------------------------------------------------------------------------------------ */

const fmtTime = (s: number) => `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`;

async function seed(total: number): Promise<{ seconds: number; records: number; stages: number }> {
  const gen = new Generator(total);
  const late: { due: number; rec: Rec }[] = [];
  let batchNo = 0;
  let records = 0;
  let stages = 0;
  const t0 = performance.now();
  let lastReport = t0;
  while (gen.count < total || late.length) {
    const batch: Rec[] = [];
    while (late.length && late[0].due <= batchNo && batch.length < BATCH) batch.push(late.shift()!.rec);
    while (gen.count < total && batch.length < BATCH) {
      const { first, late: l } = gen.next();
      batch.push(first);
      if (l) late.push({ due: batchNo + 2, rec: l });
    }
    if (!batch.length) {
      batchNo++; // only late reads left, not due yet
      continue;
    }
    // What POST /api/v1/receipts does before ingest: validate every record against the wire schema.
    const valid: ValidRecord[] = batch.map((raw, index) => {
      const parsed = operationRecordSchema.safeParse(raw);
      if (!parsed.success) throw new Error(`generated record ${String(raw.operation_id)} is invalid: ${parsed.error.message}`);
      return { index, operationId: raw.operation_id as string, raw, sender: systemSender("bench-ui") };
    });
    const results = await ingestRecords(valid);
    const failed = results.find((r) => "error" in r);
    if (failed) throw new Error(`ingest refused a generated record: ${JSON.stringify(failed)}`);
    records += batch.length;
    for (const raw of batch) {
      const reads = raw.canonical_read;
      stages += (raw.intent ? 1 : 0) + (raw.receipt ? 1 : 0) + (Array.isArray(reads) ? reads.length : 0) + (raw.side_effects ? 1 : 0);
    }
    batchNo++;
    const now = performance.now();
    if (now - lastReport > 5000 || (gen.count >= total && !late.length)) {
      lastReport = now;
      const secs = (now - t0) / 1000;
      const rate = records / secs;
      const remaining = total - gen.count + late.length + Math.round((total - gen.count) * LATE_READ * 0.9);
      log(
        `  seeded ${gen.count.toLocaleString()}/${total.toLocaleString()} operations · ${records.toLocaleString()} records · ` +
          `${Math.round(rate).toLocaleString()} records/s · ${fmtTime(secs)} elapsed · ETA ${fmtTime(remaining / rate)}`,
      );
    }
  }
  return { seconds: (performance.now() - t0) / 1000, records, stages };
}

/* ------------------------------------------------------------------------------------------ */
/* The few reads the benchmark makes itself, per database                                       */
/* ------------------------------------------------------------------------------------------ */

type ChainCheck = { ok: boolean; count: number; detail: string };

/**
 * Counts, the outcome mix, sample inputs and the chain check: read straight from the SQLite file
 * (better-sqlite3, read only) or through the store's PostgreSQL client. Positions are 1-based
 * places in insertion order (SQLite: the dense rowid; PostgreSQL: the rank by created_seq).
 */
interface BenchDb {
  /** Where the database is, and what it is (for the header). */
  readonly where: string;
  kind(): Promise<string>;
  count(table: string): Promise<number>;
  outcomeMix(): Promise<{ o: string; n: number }[]>;
  sizeMb(): Promise<number>;
  /** How many positions `table` has (the largest one). */
  positions(table: "operations" | "operation_views"): Promise<number>;
  /** The operation at each position of `operations`. */
  operationsAt(positions: number[]): Promise<string[]>;
  /** For each position of `operation_views`: the trajectory of the first view there or later that has one. */
  trajectoriesFrom(positions: number[]): Promise<string[]>;
  /** created_seq of the view `offset` rows into created_seq order. */
  createdSeqAt(offset: number): Promise<number>;
  maxCreatedSeq(): Promise<number>;
  verifyChain(): Promise<ChainCheck>;
  /** After bulk writes: SQLite folds the WAL back; PostgreSQL vacuums and analyses, as autovacuum would. */
  settle(): Promise<void>;
  /** Drops the benchmark's own connection (SQLite; the store's client is left to `disconnect`). */
  close(): void;
}

class SqliteBench implements BenchDb {
  private handle: Database.Database | null = null;
  constructor(readonly where: string) {}

  private get db() {
    this.handle ??= new Database(this.where, { readonly: true });
    return this.handle;
  }
  private num(sql: string, ...args: unknown[]) {
    return (this.db.prepare(sql).get(...args) as { n: number }).n;
  }
  async kind() {
    return "SQLite (embedded, WAL)";
  }
  async count(table: string) {
    return this.num(`SELECT count(*) AS n FROM ${table}`);
  }
  async outcomeMix() {
    return this.db.prepare("SELECT effective_outcome AS o, count(*) AS n FROM operation_views GROUP BY 1 ORDER BY 2 DESC").all() as { o: string; n: number }[];
  }
  async sizeMb() {
    return statSync(this.where).size / 1024 / 1024;
  }
  // Rowids are dense: insert order.
  async positions(table: string) {
    return this.num(`SELECT max(rowid) AS n FROM ${table}`);
  }
  async operationsAt(positions: number[]) {
    const at = this.db.prepare("SELECT operation_id AS id FROM operations WHERE rowid = ?").pluck();
    return positions.map((p) => at.get(p) as string);
  }
  async trajectoriesFrom(positions: number[]) {
    const at = this.db.prepare("SELECT trajectory_id AS id FROM operation_views WHERE rowid >= ? AND trajectory_id IS NOT NULL LIMIT 1").pluck();
    return positions.map((p) => at.get(p) as string);
  }
  async createdSeqAt(offset: number) {
    return this.db.prepare("SELECT created_seq FROM operation_views ORDER BY created_seq LIMIT 1 OFFSET ?").pluck().get(offset) as number;
  }
  async maxCreatedSeq() {
    return this.num("SELECT max(created_seq) AS n FROM operation_views");
  }
  /** Every link of the chain, straight from the file (the same ChainVerifier as audit:verify). */
  async verifyChain(): Promise<ChainCheck> {
    const v = new ChainVerifier();
    const rows = this.db.prepare("SELECT seq, kind, operation_id, recorded_at, actor, payload, prev_hash, hash FROM chain_records ORDER BY seq").iterate() as IterableIterator<{
      seq: number;
      kind: "stage";
      operation_id: string | null;
      recorded_at: string;
      actor: string | null;
      payload: string;
      prev_hash: string;
      hash: string;
    }>;
    for (const r of rows) {
      if (!v.push({ ...r, payload: JSON.parse(r.payload) })) break;
    }
    return toCheck(v.verdict());
  }
  async settle() {
    await (await writer()).$queryRawUnsafe("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  close() {
    this.handle?.close();
    this.handle = null;
  }
}

/** PostgreSQL has no rowid: a position is a rank by created_seq, looked up for all samples in one scan. */
class PostgresBench implements BenchDb {
  constructor(readonly where: string) {}

  private async rows<T>(sql: string, ...args: unknown[]): Promise<T[]> {
    return (await reader()).$queryRawUnsafe<T[]>(sql, ...args);
  }
  // count(*) and friends are bigint on PostgreSQL.
  private async num(sql: string, ...args: unknown[]) {
    return Number((await this.rows<{ n: bigint | number | null }>(sql, ...args))[0]?.n ?? 0);
  }
  /** Rows of `table` at the given ranks of created_seq order, keyed by rank. */
  private async atRanks<T>(table: string, column: string, positions: number[]): Promise<Map<number, T>> {
    const found = await this.rows<{ rn: bigint; v: T }>(
      `SELECT rn, v FROM (SELECT ${column} AS v, row_number() OVER (ORDER BY created_seq) AS rn FROM ${table}) ranked ` +
        `WHERE rn = ANY(string_to_array($1, ',')::bigint[])`,
      [...new Set(positions)].join(","),
    );
    return new Map(found.map((r) => [Number(r.rn), r.v]));
  }
  async kind() {
    const [{ v }] = await this.rows<{ v: string }>("SELECT current_setting('server_version') AS v");
    return `PostgreSQL ${v.split(" ")[0]}`;
  }
  count(table: string) {
    return this.num(`SELECT count(*) AS n FROM ${table}`);
  }
  async outcomeMix() {
    const mix = await this.rows<{ o: string; n: bigint }>("SELECT effective_outcome AS o, count(*) AS n FROM operation_views GROUP BY 1 ORDER BY 2 DESC");
    return mix.map((m) => ({ o: m.o, n: Number(m.n) }));
  }
  async sizeMb() {
    return (await this.num("SELECT pg_database_size(current_database()) AS n")) / 1024 / 1024;
  }
  positions(table: string) {
    return this.count(table);
  }
  async operationsAt(positions: number[]) {
    const at = await this.atRanks<string>("operations", "operation_id", positions);
    return positions.map((p) => at.get(p)!);
  }
  async trajectoriesFrom(positions: number[]) {
    const seqs = await this.atRanks<number>("operation_views", "created_seq", positions);
    const next = new Map<number, string>();
    for (const seq of new Set(seqs.values())) {
      const [row] = await this.rows<{ id: string }>(
        "SELECT trajectory_id AS id FROM operation_views WHERE created_seq >= $1 AND trajectory_id IS NOT NULL ORDER BY created_seq LIMIT 1",
        seq,
      );
      next.set(seq, row?.id);
    }
    return positions.map((p) => next.get(seqs.get(p)!)!);
  }
  createdSeqAt(offset: number) {
    return this.num("SELECT created_seq AS n FROM operation_views ORDER BY created_seq LIMIT 1 OFFSET $1", offset);
  }
  maxCreatedSeq() {
    return this.num("SELECT max(created_seq) AS n FROM operation_views");
  }
  /** Every link, page by page through the store (the same ChainVerifier as audit:verify). */
  async verifyChain() {
    return toCheck((await verifyStoredChain()).verdict);
  }
  async settle() {
    log("VACUUM (ANALYZE) of the seeded tables, as autovacuum would do after a bulk load…");
    for (const table of ["chain_records", "operations", "operation_views", "operation_keys", "operation_edges"]) {
      await (await writer()).$executeRawUnsafe(`VACUUM (ANALYZE) ${table}`);
    }
  }
  close() {}
}

function toCheck(verdict: ChainVerdict): ChainCheck {
  return verdict.ok ? { ok: true, count: verdict.count, detail: `head ${verdict.head.slice(0, 16)}…` } : { ok: false, count: verdict.count, detail: `bad seq ${verdict.badSeq}: ${verdict.problem}` };
}

/**
 * `--database-url` (PostgreSQL), else `--db PATH`, else a fresh temp file. Sets DATABASE_URL for
 * the store. `fresh`: the SQLite file did not exist yet (null on PostgreSQL: empty means fresh).
 */
function openBench(): { bench: BenchDb; url: string; fresh: boolean | null; reuseHint: string } {
  const pgUrl = values["database-url"] ?? process.env.BENCH_DATABASE_URL;
  if (pgUrl) {
    if (values.db) throw new Error("pass --db (SQLite) or --database-url (PostgreSQL), not both");
    if (providerOf(pgUrl) !== "postgresql") throw new Error("--database-url / BENCH_DATABASE_URL must be postgresql://… (use --db for SQLite)");
    process.env.DATABASE_URL = pgUrl;
    const u = new URL(pgUrl);
    const bench = new PostgresBench(`${u.host}${u.pathname}`);
    return { bench, url: pgUrl, fresh: null, reuseHint: "drop its tables or pass another --database-url" };
  }
  const dbFile = values.db ? path.resolve(values.db) : path.join(mkdtempSync(path.join(os.tmpdir(), "reconcile-bench-ui-")), "bench.db");
  mkdirSync(path.dirname(dbFile), { recursive: true });
  const url = `file:${dbFile}`;
  process.env.DATABASE_URL = url;
  return { bench: new SqliteBench(dbFile), url, fresh: !existsSync(dbFile), reuseHint: "delete it or pass another --db" };
}

/* ------------------------------------------------------------------------------------------ */
/* Measurement                                                                                  */
/* ------------------------------------------------------------------------------------------ */

type Row = { name: string; target: number | null; p50: number; p95: number; p99: number; max: number; rows: string; n: number; errors: number; error: string | null };

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** Wall-clock budget per query: slow aggregates get fewer samples (never under 20), not minutes each. */
const BUDGET_MS = 60_000;
const WARMUP_BUDGET_MS = 10_000;

/**
 * Times `fn` after a warm-up; a call that throws is counted (and its first message kept), not
 * timed. A query whose warm-up shows it cannot take `samples` calls within BUDGET_MS gets
 * BUDGET_MS worth of them (at least 20): the table's samples column says how many.
 */
async function measure(
  name: string,
  target: number | null,
  fn: (i: number) => Promise<number>,
  samples = SAMPLES,
  warmup = WARMUP,
): Promise<Row> {
  let errors = 0;
  let error: string | null = null;
  const call = async (i: number): Promise<number | null> => {
    try {
      return await fn(i);
    } catch (e) {
      errors++;
      error ??= `${(e as { code?: string }).code ?? ""} ${(e instanceof Error ? e.message : String(e)).trim().split("\n").pop()}`.trim();
      return null;
    }
  };
  const w0 = performance.now();
  let warmed = 0;
  while (warmed < warmup && (warmed === 0 || performance.now() - w0 < WARMUP_BUDGET_MS)) await call(warmed++);
  const perCall = warmed ? (performance.now() - w0) / warmed : 0;
  if (perCall * samples > BUDGET_MS) samples = Math.max(20, Math.floor(BUDGET_MS / perCall));
  warmup = warmed;
  errors = 0;
  const times: number[] = [];
  const counts: number[] = [];
  for (let i = 0; i < samples; i++) {
    const s = performance.now();
    const n = await call(warmup + i);
    const elapsed = performance.now() - s;
    if (n === null) continue;
    times.push(elapsed);
    counts.push(n);
  }
  times.sort((a, b) => a - b);
  counts.sort((a, b) => a - b);
  const rows = !counts.length ? "—" : counts[0] === counts[counts.length - 1] ? String(counts[0]) : `${counts[0]}–${counts[counts.length - 1]}`;
  const row = times.length
    ? { name, target, p50: pct(times, 50), p95: pct(times, 95), p99: pct(times, 99), max: times[times.length - 1], rows, n: times.length, errors, error }
    : { name, target, p50: NaN, p95: NaN, p99: NaN, max: NaN, rows, n: 0, errors, error };
  log(`  ${name}: p95 ${row.p95.toFixed(1)} ms${errors ? ` · ${errors} errors` : ""}`);
  return row;
}

function printTable(rows: Row[]) {
  const w = Math.max(...rows.map((r) => r.name.length));
  const f = (x: number) => (Number.isNaN(x) ? "—" : x.toFixed(1)).padStart(8);
  console.log(`${"query".padEnd(w)}  ${"samples".padStart(7)} ${"rows".padStart(9)} ${"p50 ms".padStart(8)} ${"p95 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"max ms".padStart(8)}  target (p95)`);
  for (const r of rows) {
    const verdict = r.target === null ? "—" : r.errors ? `≤ ${r.target} ms FAILED` : `≤ ${r.target} ms ${r.p95 <= r.target ? "met" : "MISSED"}`;
    console.log(`${r.name.padEnd(w)}  ${String(r.n).padStart(7)} ${r.rows.padStart(9)} ${f(r.p50)} ${f(r.p95)} ${f(r.p99)} ${f(r.max)}  ${verdict}`);
  }
  for (const r of rows.filter((x) => x.errors)) console.log(`  ! ${r.name}: ${r.errors} of ${r.errors + r.n} calls threw: ${r.error}`);
}

/* ------------------------------------------------------------------------------------------ */
/* First-load JavaScript from the existing build (read only)                                    */
/* ------------------------------------------------------------------------------------------ */

/** The operator pages, named; any other page route the build has is listed after them. */
const PAGES: Record<string, string> = {
  "/": "overview",
  "/operations": "operations list",
  "/operations/[operationId]": "operation",
  "/trajectories": "trajectories",
  "/trajectories/[trajectoryId]": "trajectory",
  "/review": "review queue",
};

/**
 * Next 16 (Turbopack) writes `.next/diagnostics/route-bundle-stats.json`: per route, the chunks
 * its first load fetches. Cross-checked against the route's client-reference manifest (the
 * `entryJSFiles` of its layouts and page) plus `build-manifest.json` `rootMainFiles`; the
 * `polyfillFiles` are `nomodule` and not loaded by modern browsers, so they are left out.
 */
function firstLoadJs() {
  const next = path.join(root, ".next");
  if (!existsSync(path.join(next, "BUILD_ID"))) {
    console.log("no .next/ build here: first-load JavaScript not measured (run `npm run build` first).");
    return;
  }
  const buildId = readFileSync(path.join(next, "BUILD_ID"), "utf8").trim();
  const builtAt = statSync(path.join(next, "BUILD_ID")).mtime.toISOString().slice(0, 16).replace("T", " ");
  const statsFile = path.join(next, "diagnostics/route-bundle-stats.json");
  const stats: { route: string; firstLoadUncompressedJsBytes: number; firstLoadChunkPaths: string[] }[] = existsSync(statsFile)
    ? JSON.parse(readFileSync(statsFile, "utf8"))
    : [];

  const buildManifest = JSON.parse(readFileSync(path.join(next, "build-manifest.json"), "utf8")) as { rootMainFiles: string[] };
  const appPaths = JSON.parse(readFileSync(path.join(next, "app-path-routes-manifest.json"), "utf8")) as Record<string, string>;
  const fromManifest = (route: string): string[] | null => {
    const entry = Object.entries(appPaths).find(([, r]) => r === route)?.[0];
    if (!entry) return null;
    const file = path.join(next, "server/app", `${entry}_client-reference-manifest.js`);
    if (!existsSync(file)) return null;
    const sandbox: { __RSC_MANIFEST?: Record<string, { entryJSFiles: Record<string, string[]> }> } = {};
    vm.runInNewContext(readFileSync(file, "utf8"), sandbox);
    const m = sandbox.__RSC_MANIFEST?.[entry];
    if (!m) return null;
    return [...new Set([...Object.values(m.entryJSFiles).flat(), ...buildManifest.rootMainFiles])].map((p) => `.next/${p}`);
  };

  const gz = new Map<string, { raw: number; gzip: number } | null>();
  const size = (rel: string) => {
    if (!gz.has(rel)) {
      const file = path.join(root, rel);
      if (!existsSync(file)) gz.set(rel, null);
      else {
        const buf = readFileSync(file);
        gz.set(rel, { raw: buf.length, gzip: gzipSync(buf).length });
      }
    }
    return gz.get(rel)!;
  };
  console.log(`First-load JavaScript per page (build ${buildId}, ${builtAt} UTC; gzip level 6 of each chunk, summed):`);
  const shared = buildManifest.rootMainFiles.map((p) => size(`.next/${p}`));
  const sharedGz = shared.reduce((a, s) => a + (s?.gzip ?? 0), 0);
  const pageRoutes = Object.entries(appPaths)
    .filter(([entry]) => entry.endsWith("/page") && !/\/_(not-found|global-error)\/page$/.test(entry))
    .map(([, route]) => route);
  const routes = [...Object.keys(PAGES), ...pageRoutes.filter((r) => !(r in PAGES)).sort()];
  for (const route of routes) {
    const label = PAGES[route] ?? "";
    const fromStats = stats.find((s) => s.route === route)?.firstLoadChunkPaths ?? null;
    const fromRsc = fromManifest(route);
    const chunks = fromStats ?? fromRsc;
    if (!chunks) {
      console.log(`  ${route.padEnd(30)} not in this build`);
      continue;
    }
    const sizes = chunks.map(size);
    const missing = sizes.filter((s) => s === null).length;
    const raw = sizes.reduce((a, s) => a + (s?.raw ?? 0), 0);
    const gzip = sizes.reduce((a, s) => a + (s?.gzip ?? 0), 0);
    const agree = fromStats && fromRsc ? (fromStats.length === fromRsc.length && fromStats.every((c) => fromRsc.includes(c)) ? "manifests agree" : "manifests DISAGREE") : fromStats ? "route-bundle-stats only" : "client-reference manifest only";
    console.log(
      `  ${route.padEnd(30)} ${label.padEnd(16)} ${(gzip / 1024).toFixed(1).padStart(6)} kB gzip  (${(raw / 1024).toFixed(1)} kB raw, ${chunks.length} chunks, ` +
        `${((gzip - sharedGz) / 1024).toFixed(1)} kB beyond the shared runtime; ${agree}${missing ? `; ${missing} chunk(s) missing on disk` : ""})`,
    );
  }
  console.log(`  shared by every page (rootMainFiles): ${(sharedGz / 1024).toFixed(1)} kB gzip`);
}

/* ------------------------------------------------------------------------------------------ */

async function main() {
  const { bench, url, fresh: freshFile, reuseHint } = openBench();
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
    seeding = await seed(OPERATIONS);
    await bench.settle();
    log(`seeded in ${fmtTime(seeding.seconds)} (${Math.round(seeding.records / seeding.seconds).toLocaleString()} records/s)`);
  }

  const tables = {
    chain_records: await bench.count("chain_records"),
    operations: await bench.count("operations"),
    operation_views: await bench.count("operation_views"),
    operation_keys: await bench.count("operation_keys"),
    operation_edges: await bench.count("operation_edges"),
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
    await measure("review page data (counts, oldest 50, assignees)", null, async () => {
      await reviewCounts();
      const { items } = await listOperations(listQuerySchema.parse({ needs_review: "true", order: "oldest", limit: "50" }));
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
  // Seconds per call at a million operations: a few samples say enough (--trajectory-samples).
  const trajectorySamples = Math.min(SAMPLES, Number(values["trajectory-samples"]));
  rows.push(await measure("listTrajectories() (/trajectories)", null, async () => (await listTrajectories()).length, trajectorySamples, 1));
  printTable(rows);
  console.log("");
  firstLoadJs();

  await disconnect();
  if (bench instanceof SqliteBench && !values.db) console.log(`\nthe database is kept for reruns: --db ${where}  (delete ${path.dirname(where)} when done)`);
}

main().catch(async (e) => {
  console.error(e);
  await disconnect().catch(() => {});
  process.exit(1);
});
