import { spawnSync } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { demoRecords } from "@/lib/domain/demo-data";
import { REASONS } from "@/lib/domain/outcomes";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";

/**
 * The overview reads rollups that writeProjection keeps beside operation_views. Here they are
 * held against counting operation_views itself, on the suite's database (so every operation
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
  return spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "--conditions=react-server", "lib/cli/index.ts", ...args], {
    env: { ...process.env },
    encoding: "utf8",
  });
}

type View = { createdAt: string; tool: string | null; effectiveOutcome: string; needsReview: boolean; overclaimed: boolean; receiptAt: string | null; receiptStatus: string | null; reason: string };

async function views(): Promise<View[]> {
  return (await db()).operationView.findMany({
    select: { createdAt: true, tool: true, effectiveOutcome: true, needsReview: true, overclaimed: true, receiptAt: true, receiptStatus: true, reason: true },
  });
}

const isSilent = (v: View) => v.receiptStatus === "accepted" && (v.reason === REASONS.absent || v.reason === REASONS.mismatch);

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
  const expectedOutcomes = tally(all, (v) => outcomeKey({ day: v.createdAt.slice(0, 10), tool: v.tool ?? "", effectiveOutcome: v.effectiveOutcome, needsReview: v.needsReview, overclaimed: v.overclaimed }));
  const expectedReceipts = tally(
    all.filter((v) => v.receiptAt !== null),
    (v) => v.receiptAt!.slice(0, 10),
    (v) => [1, v.receiptStatus === "accepted" ? 1 : 0, isSilent(v) ? 1 : 0],
  );
  const outcomes = (await client.outcomeRollup.findMany()).filter((r) => r.operations !== 0);
  const receipts = (await client.receiptRollup.findMany()).filter((r) => r.receipts !== 0);
  return {
    rollups: {
      outcomes: Object.fromEntries(outcomes.map((r) => [outcomeKey(r), [r.operations]])),
      receipts: Object.fromEntries(receipts.map((r) => [r.day, [r.receipts, r.accepted, r.silent]])),
    },
    counted: { outcomes: Object.fromEntries(expectedOutcomes), receipts: Object.fromEntries(expectedReceipts) },
    all,
  };
}

/** What each overview read must answer, counted from operation_views. */
async function expectOverviewAgrees(all: View[], since: string | undefined) {
  const o = await overview();
  const recent = all.filter((v) => since === undefined || v.createdAt >= since);
  const byOutcome = Object.fromEntries(["verified", "uncertain", "divergent", "rejected", "not_applied", "compensated"].map((k) => [k, recent.filter((v) => v.effectiveOutcome === k).length]));
  expect(await o.outcomeCounts(since)).toEqual({ byOutcome, needsReview: recent.filter((v) => v.needsReview).length, total: recent.length });

  const divergent = tally(recent.filter((v) => v.effectiveOutcome === "divergent" && v.tool !== null), (v) => v.tool!);
  const ranked = [...divergent].map(([tool, [n]]) => ({ tool, divergent: n })).sort((a, b) => b.divergent - a.divergent || (a.tool < b.tool ? -1 : 1));
  expect(await o.topDivergentTools(since, 1000)).toEqual(ranked);
  expect(await o.topDivergentTools(since)).toEqual(ranked.slice(0, 5));

  if (since !== undefined) {
    const receipts = tally(
      all.filter((v) => v.receiptAt !== null && v.receiptAt >= since),
      (v) => v.receiptAt!.slice(0, 10),
      (v) => [v.receiptStatus === "accepted" ? 1 : 0, isSilent(v) ? 1 : 0],
    );
    const series = [...receipts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, [accepted, silent]]) => ({ day, accepted, silent, rate: accepted ? silent / accepted : 0 }));
    expect(await o.silentFailureRate(since), `silentFailureRate since ${since}`).toEqual(series);
    // The page links both numbers to the list on the same clock: it must list exactly them.
    const sum = (k: "accepted" | "silent") => series.reduce((a, d) => a + d[k], 0);
    expect(await countListed({ silent_failure: "true", called_since: since }), `silent since ${since}`).toBe(sum("silent"));
    expect(await countListed({ receipt_status: "accepted", called_since: since }), `accepted since ${since}`).toBe(sum("accepted"));
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
