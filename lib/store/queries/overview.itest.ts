import { beforeAll, describe, expect, inject, it } from "vitest";
import { demoRecords } from "@/lib/domain/demo-data";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";
import { oneClockRecount } from "@/lib/testing/migrations";
import { runCliSync } from "@/lib/testing/cli";

/**
 * The overview reads rollups that writeProjection keeps beside operation_views, every figure by
 * the day of the call (called_at). Here they are held against counting operation_views itself, on the suite's database (so every operation
 * any test stored counts), after ingest through the server, later stages, corrections of every
 * kind, and a rebuild.
 */
let ingestToken: string;
let reviewToken: string;

beforeAll(async () => {
  ingestToken = (await principal("reviewer", ["ingest", "verify", "read"])).token;
  reviewToken = (await principal("reviewer", ["review", "read"])).token;
});

const overview = () => import("@/lib/store/queries/overview");

/** How many operations the list shows for these parameters, over every page. */
async function countListed(params: Record<string, string>): Promise<number> {
  const { listOperations, listQuerySchema } = await import("@/lib/store/queries/list-operations");
  let n = 0;
  for (let cursor: string | null | undefined; ; ) {
    const page = await listOperations(listQuerySchema.parse({ ...params, limit: "200", ...(cursor ? { cursor } : {}) }));
    n += page.items.length;
    if (!page.next_cursor) return n;
    cursor = page.next_cursor;
  }
}

function cli(args: string[]) {
  return runCliSync(args);
}

type View = { calledAt: string; tool: string | null; effectiveOutcome: string; needsReview: boolean; overclaimed: boolean; receiptStatus: string | null; actual: string };

async function views(): Promise<View[]> {
  return (await db()).operationView.findMany({
    select: { calledAt: true, tool: true, effectiveOutcome: true, needsReview: true, overclaimed: true, receiptStatus: true, actual: true },
  });
}

function tally<T>(items: T[], key: (t: T) => string, add: (t: T) => number[] = () => [1]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const t of items) {
    const k = key(t);
    const a = add(t);
    const row = out.get(k) ?? a.map(() => 0);
    a.forEach((n, i) => (row[i] += n));
    out.set(k, row);
  }
  return out;
}

/** The rollup tables, and the same counted from operation_views. */
async function rollupsAndCounts() {
  const client = await db();
  const all = await views();
  const outcomeKey = (r: { day: string; tool: string; effectiveOutcome: string; needsReview: boolean; overclaimed: boolean }) =>
    JSON.stringify([r.day, r.tool, r.effectiveOutcome, r.needsReview, r.overclaimed]);
  const expectedOutcomes = tally(all, (v) => outcomeKey({ day: v.calledAt.slice(0, 10), tool: v.tool ?? "", effectiveOutcome: v.effectiveOutcome, needsReview: v.needsReview, overclaimed: v.overclaimed }));
  const outcomes = (await client.outcomeRollup.findMany()).filter((r) => r.operations !== 0);
  return {
    rollups: { outcomes: Object.fromEntries(outcomes.map((r) => [outcomeKey(r), [r.operations]])) },
    counted: { outcomes: Object.fromEntries(expectedOutcomes) },
    all,
  };
}

class RolledBack extends Error {}
const sortedRows = (rows: object[]) => rows.filter((r) => (r as { operations: number }).operations !== 0).map((r) => JSON.stringify(r)).sort();

/**
 * The rollups as the migration that moved them to the call's day re-counts them in SQL (run in a
 * transaction that is rolled back), and as writeProjection keeps them: the same rows.
 */
async function expectMigrationRecountAgrees() {
  const { writeTransaction } = await import("@/lib/store/db/db");
  const statements = oneClockRecount(inject("databaseUrl").startsWith("postgres") ? "postgresql" : "sqlite");
  expect(statements).toHaveLength(4);
  type Tx = Parameters<Parameters<typeof writeTransaction>[0]>[0];
  const read = async (tx: Tx) => ({ outcomes: sortedRows(await tx.outcomeRollup.findMany()), metrics: sortedRows(await tx.metricRollup.findMany()) });
  let kept: Awaited<ReturnType<typeof read>> | undefined;
  let recounted: typeof kept;
  try {
    await writeTransaction(async (tx) => {
      kept = await read(tx);
      for (const s of statements) await tx.$executeRawUnsafe(s);
      recounted = await read(tx);
      throw new RolledBack();
    });
  } catch (e) {
    if (!(e instanceof RolledBack)) throw e;
  }
  expect(kept?.outcomes.length).toBeGreaterThan(0);
  expect(recounted).toEqual(kept);
}

/** What each overview read must answer, counted from operation_views. */
async function expectOverviewAgrees(all: View[], since: string | undefined) {
  const o = await overview();
  const recent = all.filter((v) => since === undefined || v.calledAt >= since);
  const byOutcome = Object.fromEntries(["verified", "uncertain", "divergent", "rejected", "not_applied", "compensated"].map((k) => [k, recent.filter((v) => v.effectiveOutcome === k).length]));
  expect(await o.outcomeCounts(since)).toEqual({ byOutcome, needsReview: recent.filter((v) => v.needsReview).length, total: recent.length });

  const divergent = tally(recent.filter((v) => v.effectiveOutcome === "divergent" && v.tool !== null), (v) => v.tool!);
  const ranked = [...divergent].map(([tool, [n]]) => ({ tool, divergent: n })).sort((a, b) => b.divergent - a.divergent || (a.tool < b.tool ? -1 : 1));
  expect(await o.topDivergentTools(since, 1000)).toEqual(ranked);
  expect(await o.topDivergentTools(since)).toEqual(ranked.slice(0, 5));

  if (since !== undefined) {
    // Metric 2 per day of the call: accepted, effect not held, over accepted with a known effect.
    const days = tally(
      recent.filter((v) => v.receiptStatus === "accepted"),
      (v) => v.calledAt.slice(0, 10),
      (v) => [v.actual === "not_held" ? 1 : 0, v.actual === "held" ? 1 : 0, v.actual === "unknown" ? 1 : 0],
    );
    const series = [...days]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([day, [silent, held, unknown]]) => ({ day, accepted: silent + held, silent, unknown, rate: silent + held ? silent / (silent + held) : 0 }));
    expect(await o.silentFailureRate(since), `silentFailureRate since ${since}`).toEqual(series);
    // One number for one thing: /metrics's Metric 2 over the same period is the same count.
    const sum = (k: "accepted" | "silent" | "unknown") => series.reduce((a, d) => a + d[k], 0);
    const { readMetrics } = await import("@/lib/store/queries/metrics");
    const m2 = (await readMetrics({ since })).metrics.silent_failure_rate;
    expect({ hit: m2.hit, n: m2.n, unknown: m2.unknown }, `Metric 2 since ${since}`).toEqual({ hit: sum("silent"), n: sum("accepted"), unknown: sum("unknown") });
    // The page links both numbers to the list on the same clock: it must list exactly them.
    expect(await countListed({ silent_failure: "true", called_since: since }), `silent since ${since}`).toBe(sum("silent"));
    expect(await countListed({ metric: "silent_failure_rate", part: "hit", called_since: since }), `hit since ${since}`).toBe(sum("silent"));
    expect(await countListed({ metric: "silent_failure_rate", part: "n", called_since: since }), `n since ${since}`).toBe(sum("accepted"));
  }
}

async function expectReviewAgrees(all: View[]) {
  const queue = all.filter((v) => v.needsReview);
  expect(await (await overview()).reviewCounts()).toEqual({
    total: queue.length,
    uncertain: queue.filter((v) => v.effectiveOutcome === "uncertain").length,
    divergent: queue.filter((v) => v.effectiveOutcome === "divergent").length,
    rejected: queue.filter((v) => v.effectiveOutcome === "rejected").length,
    overclaimed: queue.filter((v) => v.overclaimed).length,
  });
}

const correct = async (id: string, body: Record<string, unknown>) => {
  const r = await call(`/api/v1/operations/${id}/corrections`, { token: reviewToken, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { correction: { id: string } };
};

describe("overview rollups", () => {
  it("match counting operation_views through ingest, later stages, corrections and a rebuild; every overview read agrees", async () => {
    const tag = unique("roll");
    const records = demoRecords(new Date()).slice(0, 80).map((r) => ({ ...r, operation_id: `${r.operation_id}-${tag}`, trajectory_id: r.trajectory_id ? `${r.trajectory_id}-${tag}` : r.trajectory_id }));
    expect((await ingest(ingestToken, { records })).status).toBe(200);
    // Receipts inside the last hour, one a silent failure, so that a period starting an hour ago
    // has a partial day to count (SQLite once bound that query's parameters in the wrong order).
    const recent = new Date(Date.now() - 10 * 60_000).toISOString();
    const lastHour = [
      { operation_id: `recent-a-${tag}`, tool: "x.post", receipt: { status: "accepted", observed_at: recent }, canonical_read: { status: "absent", observed_at: recent } },
      { operation_id: `recent-b-${tag}`, tool: "x.post", receipt: { status: "accepted", observed_at: recent } },
    ];
    expect((await ingest(ingestToken, { records: lastHour })).status).toBe(200);

    const client = await db();
    const ours = await client.operationView.findMany({ where: { operationId: { endsWith: tag } }, orderBy: { createdSeq: "asc" } });
    const divergent = ours.filter((v) => v.effectiveOutcome === "divergent");
    const uncertain = ours.filter((v) => v.effectiveOutcome === "uncertain" && v.receiptStatus === "accepted");
    const touched = new Set([...divergent.slice(0, 2), ...uncertain.slice(0, 2)].map((v) => v.operationId));
    const overclaimed = ours.filter((v) => v.overclaimed && !touched.has(v.operationId));
    expect(divergent.length).toBeGreaterThanOrEqual(3);
    expect(uncertain.length).toBeGreaterThanOrEqual(2);
    expect(overclaimed.length).toBeGreaterThanOrEqual(1);

    // A later stage moves an operation between buckets: the row it replaces is counted out.
    const read = { status: "match", observed_at: new Date(Date.now() + 60_000).toISOString(), evidence: { object_id: `obj-${tag}` } };
    // An intent recorded now whose receipt, arriving later, says the call was three days ago:
    // its call day moves from today to then (counted out of one day, into the other).
    const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000).toISOString();
    expect((await ingest(ingestToken, { operation_id: `late-${tag}`, tool: "x.post", intent: { effect: "post once" } })).status).toBe(201);
    expect((await ingest(ingestToken, { operation_id: `late-${tag}`, receipt: { status: "accepted", observed_at: threeDaysAgo }, canonical_read: { status: "absent", observed_at: threeDaysAgo } })).status).toBe(200);
    expect((await client.operationView.findUniqueOrThrow({ where: { operationId: `late-${tag}` } })).calledAt).toBe(threeDaysAgo);
    expect((await ingest(ingestToken, { operation_id: uncertain[0].operationId, canonical_read: read })).status).toBe(200);
    // Corrections of every kind move it again.
    const resolved = await correct(divergent[0].operationId, { action: "resolve", outcome: "not_applied", reason: "never happened" });
    await correct(divergent[1].operationId, { action: "resolve", outcome: "compensated", reason: "undone by hand" });
    await correct(uncertain[1].operationId, { action: "resolve", outcome: "verified", reason: "seen on the profile", evidence: { url: "https://example.test/post/1" } });
    await correct(overclaimed[0].operationId, { action: "retract", reason: "the success claim was wrong" });
    await correct(divergent[0].operationId, { action: "reopen", reason: "it did happen after all", expected_last_correction_id: resolved.correction.id });

    const now = Date.now();
    const o = await overview();
    const sinces = [undefined, o.periodStart(1), o.periodStart(30), new Date(now - 3_600_000).toISOString(), new Date(now + 3_600_000).toISOString(), "2000-01-01T00:00:00.000Z"];
    const check = async () => {
      const { rollups, counted, all } = await rollupsAndCounts();
      expect(rollups).toEqual(counted);
      for (const since of sinces) await expectOverviewAgrees(all, since);
      await expectReviewAgrees(all);
      await expectMigrationRecountAgrees();
      return rollups;
    };
    const before = await check();

    const r = cli(["projections:rebuild"]);
    expect(r.status, r.stderr).toBe(0);
    expect(await check()).toEqual(before);
  });

  it("a period is today and the days before it, from UTC midnight", async () => {
    const { periodStart } = await overview();
    const now = Date.parse("2026-11-30T17:45:12.345Z");
    expect(periodStart(1, now)).toBe("2026-11-30T00:00:00.000Z");
    expect(periodStart(7, now)).toBe("2026-11-24T00:00:00.000Z");
    expect(periodStart(30, now)).toBe("2026-11-01T00:00:00.000Z");
  });
});
