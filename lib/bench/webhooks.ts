/**
 * `npm run bench:webhooks`: webhook deliveries per second to a local receiver (which verifies
 * every signature with the standardwebhooks library), and ingest throughput with ten endpoints
 * subscribed to everything against none, in the same run on the same server and database:
 * rounds alternate (none, ten, none, ten, …), each sending the same kind of records (the
 * essay's divergent case: one operation.needs_review each, so ten deliveries each with ten
 * endpoints), and each round waits until every delivery of the round before it has ended, so no
 * round pays for another's deliveries. Prints figures and the ratio; asserts nothing beyond
 * "every delivery arrived, signed" (docs/BENCHMARKS.md).
 *
 * Needs a build (`npm run build`). Options: --records N (per round, default 2,000), --rounds N
 * (per side, default 2), --endpoints N (default 10), --clients N (requests in flight, default
 * 4), --batch N (records a request, default 50), --database-url postgresql://… (an empty database).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { divergentRecord } from "../reliability/harness";
import { newSecret, sealSecret, secretHint } from "../domain/webhooks/signing";
import { startReceiver } from "../webhooks/testing/receiver";
import { startBenchServer } from "./bench-server";

const { values } = parseArgs({
  options: {
    records: { type: "string", default: "2000" },
    rounds: { type: "string", default: "2" },
    endpoints: { type: "string", default: "10" },
    clients: { type: "string", default: "4" },
    batch: { type: "string", default: "50" },
    "database-url": { type: "string" },
  },
});
const RECORDS = Number(values.records);
const ROUNDS = Number(values.rounds);
const ENDPOINTS = Number(values.endpoints);
const CLIENTS = Number(values.clients);
const BATCH = Number(values.batch);

async function main() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-bench-webhooks-"));
  const url = values["database-url"] || process.env.BENCH_DATABASE_URL || `file:${path.join(tmp, "bench.db")}`;
  // The receiver is on 127.0.0.1 over plain HTTP.
  process.env.RECONCILE_WEBHOOK_ALLOW_HTTP = "1";
  process.env.RECONCILE_WEBHOOK_ALLOW_PRIVATE = "1";
  const rx = await startReceiver();
  const { base, token, server, env } = await startBenchServer(url, "ingest,verify,read");
  process.env.DATABASE_URL = url;
  const store = await import("@/lib/store/settings/webhooks");
  const { jobCounts } = await import("@/lib/store/work/jobs");
  const made: { id: string }[] = [];
  for (let i = 0; i < ENDPOINTS; i++) {
    const secret = newSecret();
    const e = await store.createEndpoint(
      { url: rx.url(`/bench-${i}`), description: "bench", format: "standard", enabled: false, filters: { event_types: [], tools: [], outcomes: [], agents: [] } },
      { sealed: sealSecret(secret, env.AUTH_SECRET!), hint: secretHint(secret) },
      "bench",
    );
    rx.secrets.set(`/bench-${i}`, secret);
    made.push(e);
  }
  const setEnabled = async (enabled: boolean) => {
    for (const e of made) await store.updateEndpoint(e.id, { enabled });
  };
  const pendingDeliveries = async () => (await jobCounts()).filter((c) => c.kind === "webhook" && c.status === "pending").reduce((s, c) => s + c.count, 0);
  const drained = async () => {
    while ((await pendingDeliveries()) > 0) await new Promise((r) => setTimeout(r, 100));
  };

  console.log(`Reconcile webhooks benchmark · ${os.cpus().length} cores · ${url.startsWith("file:") ? "SQLite (embedded)" : "PostgreSQL"} · node ${process.version}`);
  console.log(`${ROUNDS} rounds per side of ${RECORDS} divergent records (${BATCH} a request, ${CLIENTS} in flight), alternating none / ${ENDPOINTS} endpoints subscribed to everything\n`);

  let n = 0;
  const ingestRound = async () => {
    const bodies: string[] = [];
    for (let i = 0; i < RECORDS; i += BATCH) {
      bodies.push(JSON.stringify({ records: Array.from({ length: Math.min(BATCH, RECORDS - i) }, () => divergentRecord(`op-wh-bench-${process.pid}-${n++}`, "bench")) }));
    }
    let next = 0;
    let errors = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < bodies.length) {
          const body = bodies[next++];
          const res = await fetch(`${base}/api/v1/receipts`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body });
          await res.arrayBuffer();
          if (res.status !== 200) errors++;
        }
      }),
    );
    return { ms: performance.now() - start, errors };
  };

  await setEnabled(false);
  await ingestRound(); // warm-up: routes compiled, connections open, nothing subscribed
  const sides = { none: { ms: 0, errors: 0 }, ten: { ms: 0, errors: 0 } };
  let deliveredMs = 0;
  let delivered = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of ["none", "ten"] as const) {
      await setEnabled(side === "ten");
      const before = rx.received.length;
      const r = await ingestRound();
      sides[side].ms += r.ms;
      sides[side].errors += r.errors;
      if (side === "ten") {
        // Deliveries ran during the round and go on after it: time from the round's start to the last arrival.
        const started = Date.now() - r.ms;
        await drained();
        const got = rx.received.slice(before).filter((r) => r.body.type === "operation.needs_review").length;
        delivered += got;
        deliveredMs += rx.received[rx.received.length - 1].at - started;
      }
    }
  }
  await setEnabled(false);
  server.kill("SIGTERM");
  await rx.close();

  const total = RECORDS * ROUNDS;
  const rate = (side: "none" | "ten") => total / (sides[side].ms / 1000);
  const unsigned = rx.received.filter((r) => !r.verified).length;
  // Checkpoints signed meanwhile are delivered too, and not counted.
  const expected = total * ENDPOINTS;
  console.log(`ingest, no endpoint:           ${rate("none").toFixed(0)} records/s · errors ${sides.none.errors}`);
  console.log(`ingest, ${ENDPOINTS} endpoints, everything: ${rate("ten").toFixed(0)} records/s · errors ${sides.ten.errors}`);
  console.log(`ratio: ${((rate("ten") / rate("none")) * 100).toFixed(0)}% of the throughput with no endpoint`);
  console.log(`delivered: ${delivered.toLocaleString("en")} of ${expected.toLocaleString("en")} messages at ${(delivered / (deliveredMs / 1000)).toFixed(0)} events/s (from each round's start to its last arrival, ingest running meanwhile) · signatures not verified: ${unsigned}`);
  rmSync(tmp, { recursive: true, force: true });
  process.exit(sides.none.errors + sides.ten.errors + unsigned || delivered !== expected ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
