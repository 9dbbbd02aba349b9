/**
 * `npm run bench:verifiers`: verifiers against a local service, on the real production server
 * (a fresh embedded SQLite database, or --database-url / BENCH_DATABASE_URL), in two modes in one
 * run, one server each on the same database, one after the other (alternating with --rounds):
 * "one" commits each check's result in its own transaction (RECONCILE_VERIFIER_GROUP=1) with 8
 * checks at once, the settings before groups; "grouped" runs the server's defaults (groups,
 * lib/verifiers/commit.ts, and 32 at once). --concurrency N runs both at N. Each mode:
 *   1. ingest throughput of receipts whose tool has no verifier, then of receipts whose tool has
 *      one (one check each, scheduled in the ingest transaction and run meanwhile by the
 *      server's job worker): the ratio is the added ingest cost;
 *   2. checks per second sustained: from the first check recorded to the last, every check of
 *      those receipts performed against the local service and recorded as a chained read.
 * Then grouped ÷ one. Prints figures; asserts nothing (docs/BENCHMARKS.md). Needs a build.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { startBenchServer, stopBenchServer } from "./bench-server";
import { startSocialService, socialVerifier, type SocialService } from "../verifiers/social-service";

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "30" },
    rounds: { type: "string", default: "1" },
    /** RECONCILE_VERIFIER_CONCURRENCY for both modes (unset: 8 for "one", as before groups; the server's default for "grouped"). */
    concurrency: { type: "string" },
    "database-url": { type: "string" },
  },
});
const BATCHES = Number(values.batches);
const ROUNDS = Number(values.rounds);
const PER_BATCH = 100;

let counter = 0;
function record(tool: string, receiptId: string) {
  const id = `bench-v-${process.pid}-${++counter}`;
  const text = `post ${id}`;
  return {
    operation_id: id,
    tool: { name: tool },
    intent: { effect: "publish exactly one post", params: { text } },
    receipt: { status: "accepted", receipt_id: receiptId, observed_at: new Date().toISOString(), params: { text } },
  };
}

async function ingestRun(base: string, headers: Record<string, string>, bodies: string[]): Promise<{ rate: number; errors: number }> {
  let next = 0;
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const res = await fetch(`${base}/api/v1/receipts`, { method: "POST", headers, body });
        await res.arrayBuffer();
        if (res.status !== 200) errors++;
      }
    }),
  );
  return { rate: (bodies.length * PER_BATCH) / ((performance.now() - t0) / 1000), errors };
}

type Mode = { name: "one" | "grouped"; env: Record<string, string> };
type Result = { mode: Mode["name"]; plain: number; verified: number; checksPerS: number; done: number; failed: number; reads: number; span: number };

/** One mode on its own server: a verifier of its own (its tool, its job keys), its own receipts. */
async function runMode(url: string, social: SocialService, mode: Mode, round: number): Promise<Result> {
  const extra: Record<string, string> = { ...mode.env, ...(values.concurrency ? { RECONCILE_VERIFIER_CONCURRENCY: values.concurrency } : {}) };
  const { base, token, server } = await startBenchServer(url, "ingest,read,admin", extra);
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const tag = `${mode.name}-${round}`;
  const name = `bench-${tag}`;
  const tool = `bench.verified.${tag}`;
  const def = socialVerifier(social.base, { name, tool, checksAt: ["0s"], pendingUntil: "0s" });
  const saved = await fetch(`${base}/api/v1/verifiers`, { method: "POST", headers, body: JSON.stringify(def) });
  if (saved.status !== 201) throw new Error(`the verifier was refused: ${await saved.text()}`);

  // Posts exist at the service before the receipts arrive (with the intended text): every first check reads a match.
  const matching = (t: string) =>
    Array.from({ length: BATCHES }, () =>
      JSON.stringify({
        records: Array.from({ length: PER_BATCH }, () => {
          const r = record(t, "");
          r.receipt.receipt_id = social.publish(r.intent.params.text, { visibleAfterMs: 0 }).id;
          return r;
        }),
      }),
    );
  await ingestRun(base, headers, matching(`bench.warm.${tag}`).slice(0, 2));
  const count = jobCounter(url, name);
  const readsBefore = await count.reads();
  const plain = await ingestRun(base, headers, matching(`bench.plain.${tag}`));
  const verifiedBodies = matching(tool);
  const verified = await ingestRun(base, headers, verifiedBodies);
  if (plain.errors || verified.errors) console.log(`  (${mode.name}: ${plain.errors} + ${verified.errors} ingest requests refused)`);

  // One check per receipt (the window is 0 s: its one check is at its end).
  const expected = BATCHES * PER_BATCH;
  let last = { done: 0, failed: 0 };
  const deadline = Date.now() + 30 * 60_000;
  while (Date.now() < deadline) {
    last = await count.status();
    if (last.done + last.failed >= expected) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const span = await count.span();
  const reads = (await count.reads()) - readsBefore;
  await stopBenchServer(server);
  return { mode: mode.name, plain: plain.rate, verified: verified.rate, checksPerS: last.done / (span / 1000), done: last.done, failed: last.failed, reads, span };
}

async function main() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-bench-verifiers-"));
  const url = values["database-url"] || process.env.BENCH_DATABASE_URL || `file:${path.join(tmp, "bench.db")}`;
  const social = await startSocialService({ visibleAfterMs: 0, keepSeen: false });
  // The allowances a local service needs; set for this benchmark's servers only.
  Object.assign(process.env, { RECONCILE_VERIFIER_ALLOW_HTTP: "1", RECONCILE_VERIFIER_ALLOW_PRIVATE: "1", SOCIAL_READ_TOKEN: "bench-read-token", RECONCILE_VERIFIER_ENV: "SOCIAL_READ_TOKEN" });
  const receipts = BATCHES * PER_BATCH;
  console.log(`Reconcile verifier benchmark · ${os.cpus().length} cores · ${url.startsWith("file:") ? "SQLite (embedded)" : "PostgreSQL"} · node ${process.version}`);
  console.log(`${receipts.toLocaleString()} receipts a tool, batches of ${PER_BATCH}, 4 clients · verifier concurrency ${values.concurrency ?? "8 (one), the default (grouped)"} · ${ROUNDS} round(s) of: one transaction a check, then grouped (alternating)\n`);

  const modes: Mode[] = [
    { name: "one", env: { RECONCILE_VERIFIER_GROUP: "1", RECONCILE_VERIFIER_CONCURRENCY: "8" } },
    { name: "grouped", env: {} },
  ];
  const results: Result[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const mode of round % 2 ? modes : [...modes].reverse()) {
      const r = await runMode(url, social, mode, round);
      results.push(r);
      console.log(`round ${round}, ${mode.name === "one" ? `one transaction a check (RECONCILE_VERIFIER_GROUP=1, concurrency ${values.concurrency ?? 8})` : `grouped (defaults${values.concurrency ? `, concurrency ${values.concurrency}` : ""})`}:`);
      console.log(`  ingest: without a verifier ${r.plain.toFixed(0)} receipts/s · with one (checks run meanwhile) ${r.verified.toFixed(0)} receipts/s · with ÷ without ${((r.verified / r.plain) * 100).toFixed(0)} %`);
      console.log(`  checks: ${r.done.toLocaleString()} done, ${r.failed} failed of ${receipts.toLocaleString()} (${r.reads.toLocaleString()} reads recorded) · sustained ${r.checksPerS.toFixed(0)} checks/s (${(r.span / 1000).toFixed(1)} s from the first check's end to the last)`);
    }
  }
  const mean = (m: Mode["name"], f: (r: Result) => number) => {
    const rs = results.filter((r) => r.mode === m);
    return rs.reduce((a, r) => a + f(r), 0) / rs.length;
  };
  const one = mean("one", (r) => r.checksPerS);
  const grouped = mean("grouped", (r) => r.checksPerS);
  console.log(`\nchecks/s, one transaction a check → grouped: ${one.toFixed(0)} → ${grouped.toFixed(0)} · grouped ÷ one ${(grouped / one).toFixed(2)}×`);
  console.log(
    `ingest with a verifier ÷ without: one ${(mean("one", (r) => r.verified / r.plain) * 100).toFixed(0)} % · grouped ${(mean("grouped", (r) => r.verified / r.plain) * 100).toFixed(0)} %`,
  );
  await social.close();
  rmSync(tmp, { recursive: true, force: true });
  process.exit(0);
}

/** Counts in the benchmark's database, read directly (SQLite file or PostgreSQL). */
function jobCounter(url: string, verifier: string) {
  const keys = `key LIKE 'verifier:${verifier}@%'`;
  const q = async <T>(sql: string): Promise<T[]> => {
    if (url.startsWith("file:")) {
      const db = new Database(url.slice(5), { readonly: true });
      try {
        return db.prepare(sql).all() as T[];
      } finally {
        db.close();
      }
    }
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query(sql)).rows as T[];
    } finally {
      await c.end();
    }
  };
  return {
    status: async () => {
      const rows = await q<{ status: string; n: number | string }>(`SELECT status, COUNT(*) AS n FROM job WHERE kind = 'verifier.check' AND ${keys} GROUP BY status`);
      const get = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
      return { done: get("done"), failed: get("failed") };
    },
    span: async () => {
      const [r] = await q<{ first: number | string; last: number | string }>(`SELECT MIN(finished_at) AS first, MAX(finished_at) AS last FROM job WHERE kind = 'verifier.check' AND status = 'done' AND ${keys}`);
      return Math.max(1, Number(r.last) - Number(r.first));
    },
    reads: async () => Number((await q<{ n: number | string }>("SELECT COUNT(*) AS n FROM chain_records WHERE kind = 'stage' AND stage = 'canonical_read'"))[0].n),
  };
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
