/**
 * The network to PostgreSQL fails under ingest (issue 35, parts 2 and 4; faults.ts): two app
 * instances reach their database through a FaultProxy, and the network is cut, black-holed, then
 * every chunk delayed (slow), then delayed by seconds (a stall, with a small ingest queue), each
 * for three seconds, then healed. After each: nothing acknowledged lost, nothing half-written,
 * every answer a 2xx or a 503/429 with Retry-After within the request deadline, ingest
 * succeeding again without a restart, every webhook message delivered with one success
 * recorded, the chain verifying; during the stall, ingest answers 429, the servers' memory
 * stays bounded and GET /api/v1/operations answers within the deadline. Last, the database
 * itself is paused with SIGSTOP for five seconds (`npm run soak:faults` pauses it for 30): a
 * throwaway cluster of this test's own (pg-cluster.ts), never the shared one, with one instance.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { disconnect } from "@/lib/store/db/db";
import { FAULTS, REQUEST_DEADLINE_MS, runFault, startRig, type Rig } from "./faults";
import { siblingDatabase } from "./harness";
import { startCluster, type Cluster } from "./pg-cluster";

const base = process.env.RELIABILITY_DATABASE_URL!;
let rig: Rig;
let drop: () => Promise<void> = async () => {};

/** How much the two servers' resident memory may grow during the stall (faults.ts measures it). */
const STALL_RSS_GROWTH_MIB = 200;

beforeAll(async () => {
  if (!base?.startsWith("postgres")) throw new Error("RELIABILITY_DATABASE_URL must name a PostgreSQL database for this test");
  const db = await siblingDatabase(base, "faults");
  drop = db.drop;
  rig = await startRig(db.url, 2);
}, 120_000);

let paused: { cluster: Cluster; rig?: Rig } | null = null;

afterAll(async () => {
  await rig?.close();
  await paused?.rig?.close();
  await paused?.cluster.stop();
  await disconnect();
  await drop();
});

it.each(FAULTS)("the network to PostgreSQL: %s, then heal", async (fault) => {
  const report = await runFault(rig, fault, { faultMs: 3000, log: (l) => console.log(l) });
  expect(report.problems).toEqual([]);
  expect(report.acknowledged).toBeGreaterThan(0);
  expect(report.longestMs).toBeLessThanOrEqual(REQUEST_DEADLINE_MS);
  expect(report.recoverMs).toBeLessThan(10_000);
  if (fault === "cut" || fault === "blackhole") expect(report.statuses["503"]).toBeGreaterThan(0);
  if (fault === "stall") {
    expect(report.statuses["429"]).toBeGreaterThan(0);
    expect(report.rssMiB!.max - report.rssMiB!.before).toBeLessThan(STALL_RSS_GROWTH_MIB);
    expect(report.pages!.length).toBeGreaterThan(0);
  }
});

it("PostgreSQL paused with SIGSTOP, then SIGCONT", async () => {
  const cluster = await startCluster();
  paused = { cluster };
  const db = await siblingDatabase(cluster.url, "faults");
  paused.rig = await startRig(db.url, 1, cluster);
  const report = await runFault(paused.rig, "sigstop", { faultMs: 5000, log: (l) => console.log(l) });
  expect(report.problems).toEqual([]);
  expect(report.statuses["503"]).toBeGreaterThan(0);
  expect(report.longestMs).toBeLessThanOrEqual(REQUEST_DEADLINE_MS);
  expect(report.recoverMs).toBeLessThan(10_000);
}, 120_000);
