/**
 * `npm run bench:verifiers`: verifiers against a local service, on the real production server
 * (a fresh embedded SQLite database, or --database-url / BENCH_DATABASE_URL):
 *   1. ingest throughput of receipts whose tool has no verifier, then (same run, same server) of
 *      receipts whose tool has one (one check each, scheduled in the ingest transaction and run
 *      meanwhile by the server's job worker): the ratio is the added ingest cost;
 *   2. checks per second sustained: from the first check recorded to the last, every check of
 *      those receipts performed against the local service and recorded as a chained read.
 * Prints figures; asserts nothing (docs/BENCHMARKS.md). Needs a build (`npm run build`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { startBenchServer } from "./bench-server";
import { startSocialService, socialVerifier } from "../verifiers/social-service";

const { values } = parseArgs({ options: { batches: { type: "string", default: "30" }, "database-url": { type: "string" } } });
const BATCHES = Number(values.batches);
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

async function main() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-bench-verifiers-"));
  const url = values["database-url"] || process.env.BENCH_DATABASE_URL || `file:${path.join(tmp, "bench.db")}`;
  const social = await startSocialService({ visibleAfterMs: 0, keepSeen: false });
  // The allowances a local service needs; set for this benchmark's server only.
  Object.assign(process.env, { RECONCILE_VERIFIER_ALLOW_HTTP: "1", RECONCILE_VERIFIER_ALLOW_PRIVATE: "1", SOCIAL_READ_TOKEN: "bench-read-token" });
  const { base, token, server } = await startBenchServer(url, "ingest,read,admin");
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  console.log(`Reconcile verifier benchmark · ${os.cpus().length} cores · ${url.startsWith("file:") ? "SQLite (embedded)" : "PostgreSQL"} · node ${process.version}\n`);

  const def = socialVerifier(social.base, { name: "bench-post-exists", tool: "bench.verified", checksAt: ["0s"], pendingUntil: "0s" });
  const saved = await fetch(`${base}/api/v1/verifiers`, { method: "POST", headers, body: JSON.stringify(def) });
  if (saved.status !== 201) throw new Error(`the verifier was refused: ${await saved.text()}`);

  // Posts exist at the service before the receipts arrive (with the intended text): every first check reads a match.
  const matching = (tool: string) =>
    Array.from({ length: BATCHES }, () =>
      JSON.stringify({
        records: Array.from({ length: PER_BATCH }, () => {
          const r = record(tool, "");
          r.receipt.receipt_id = social.publish(r.intent.params.text, { visibleAfterMs: 0 }).id;
          return r;
        }),
      }),
    );
  // warm-up
  await ingestRun(base, headers, matching("bench.warm").slice(0, 2));

  const plain = await ingestRun(base, headers, matching("bench.plain"));
  const verifiedBodies = matching("bench.verified");
  const checksStart = Date.now();
  const verified = await ingestRun(base, headers, verifiedBodies);
  const receipts = BATCHES * PER_BATCH;
  console.log(`ingest, batches of ${PER_BATCH}, 4 clients, ${receipts.toLocaleString()} receipts each:`);
  console.log(`  tool without a verifier: ${plain.rate.toFixed(0)} receipts/s · errors ${plain.errors}`);
  console.log(`  tool with a verifier (its check scheduled in the ingest transaction, run meanwhile): ${verified.rate.toFixed(0)} receipts/s · errors ${verified.errors}`);
  console.log(`  with ÷ without: ${((verified.rate / plain.rate) * 100).toFixed(0)} %`);

  // One check per receipt (the window is 0 s: its one check is at its end).
  const expected = receipts;
  const count = await jobCounter(url);
  let last = { done: 0, failed: 0 };
  const deadline = Date.now() + 30 * 60_000;
  while (Date.now() < deadline) {
    last = await count.status();
    if (last.done + last.failed >= expected) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const span = await count.span();
  const reads = await count.reads();
  console.log(`checks: ${last.done.toLocaleString()} done, ${last.failed} failed of ${expected.toLocaleString()} (${reads.toLocaleString()} reads recorded)`);
  console.log(`  sustained ${(last.done / (span / 1000)).toFixed(0)} checks/s from the first check's end to the last (${(span / 1000).toFixed(1)} s; all done ${((Date.now() - checksStart) / 1000).toFixed(1)} s after the verified ingest began)`);
  console.log(`  reads performed (HTTP + judged + recorded): ${(reads / (span / 1000)).toFixed(0)} reads/s`);
  await count.close();
  server.kill("SIGTERM");
  await social.close();
  rmSync(tmp, { recursive: true, force: true });
  process.exit(0);
}

/** Counts in the benchmark's database, read directly (SQLite file or PostgreSQL). */
async function jobCounter(url: string) {
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
      const rows = await q<{ status: string; n: number | string }>("SELECT status, COUNT(*) AS n FROM job WHERE kind = 'verifier.check' GROUP BY status");
      const get = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
      return { done: get("done"), failed: get("failed") };
    },
    span: async () => {
      const [r] = await q<{ first: number | string; last: number | string }>("SELECT MIN(finished_at) AS first, MAX(finished_at) AS last FROM job WHERE kind = 'verifier.check' AND status = 'done'");
      return Math.max(1, Number(r.last) - Number(r.first));
    },
    reads: async () => Number((await q<{ n: number | string }>("SELECT COUNT(*) AS n FROM chain_records WHERE kind = 'stage' AND stage = 'canonical_read'"))[0].n),
    close: async () => {},
  };
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
