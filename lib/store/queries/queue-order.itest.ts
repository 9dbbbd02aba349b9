import { readdirSync, readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";

/**
 * The review queue orders by when the call happened (issue 19 "Time"): the receipt's time, else
 * when the operation was recorded, with the place in the chain breaking ties.
 */
let token: string;
beforeAll(async () => {
  token = (await principal("reviewer", ["ingest", "verify", "read"])).token;
});

const ago = (min: number) => new Date(Date.now() - min * 60_000).toISOString();

/** Pages through the list one operation at a time, following next_cursor. */
async function pageThrough(query: string): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 20; i++) {
    const r = await call(`/api/v1/operations?${query}&limit=1${cursor ? `&cursor=${cursor}` : ""}`, { token });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    seen.push(...r.body.items.map((x: { operation_id: string }) => x.operation_id));
    cursor = r.body.next_cursor;
    if (!cursor) break;
  }
  return seen;
}

describe("ordering by call time", () => {
  it("the queue's order is the call's, not the recording's, and paging keeps it", async () => {
    const tool = unique("queue.tool");
    const op = (name: string) => `${tool}-${name}`;
    // Recorded a, b, c, d, e; called c (40 min ago), b and e (the same instant, 30), a (5); d has
    // no receipt, so its call time is when it was recorded (now).
    const rec = async (name: string, body: Record<string, unknown>) => {
      const r = await ingest(token, { operation_id: op(name), tool: { name: tool }, ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    };
    const same = ago(30);
    await rec("a", { receipt: { status: "accepted", observed_at: ago(5) } });
    await rec("b", { receipt: { status: "accepted", observed_at: same } });
    await rec("c", { intent: { effect: "x" }, receipt: { status: "accepted", observed_at: ago(40) } });
    await rec("d", { intent: { effect: "x" } });
    await rec("e", { receipt: { status: "accepted", observed_at: same } });
    const rows = await (await db()).operationView.findMany({ where: { tool }, select: { operationId: true, calledAt: true, receiptAt: true, createdAt: true } });
    expect(rows.every((r) => r.calledAt !== "")).toBe(true);
    for (const r of rows) expect(r.calledAt).toBe(r.receiptAt ?? r.createdAt);
    expect(rows.find((r) => r.operationId === op("d"))!.receiptAt).toBeNull();

    const want = [op("c"), op("b"), op("e"), op("a"), op("d")];
    const q = `needs_review=true&tool=${encodeURIComponent(tool)}`;
    expect(await pageThrough(`${q}&by=called&order=oldest`)).toEqual(want);
    expect(await pageThrough(`${q}&by=called&order=newest`)).toEqual([...want].reverse());
    // A search keeps the call order when asked for it (ranked only in the default order).
    expect(await pageThrough(`q=${encodeURIComponent(tool)}&by=called&order=oldest`)).toEqual(want);
    // The default stays the recording's order.
    expect(await pageThrough(`${q}&order=oldest`)).toEqual([op("a"), op("b"), op("c"), op("d"), op("e")]);
    const listed = await call(`/api/v1/operations?${q}&by=called&order=oldest`, { token });
    expect(listed.body.items.map((i: { called_at: string }) => i.called_at)).toEqual([...listed.body.items.map((i: { called_at: string }) => i.called_at)].sort());

    // Moving through the queue from an operation's page follows the same order.
    const { queueNeighbours } = await import("@/lib/store/queries/list-operations");
    expect((await queueNeighbours(op("b"))).next).toBe(op("e"));
    expect((await queueNeighbours(op("e"))).previous).toBe(op("b"));
  });

  it("a cursor naming no operation ends the paging; by= refuses other values", async () => {
    const r = await call(`/api/v1/operations?needs_review=true&by=called&cursor=2000000000`, { token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ items: [], next_cursor: null });
    const bad = await call(`/api/v1/operations?by=time`, { token });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/by/);
  });
});

describe("the queue_call_time migration's backfill", () => {
  it("writes what the projection writes, for every operation", async () => {
    const { provider } = await import("@/lib/store/db/database");
    const client = await db();
    const before = await client.operationView.findMany({ select: { operationId: true, calledAt: true }, orderBy: { operationId: "asc" } });
    expect(before.length).toBeGreaterThan(0);
    await client.$executeRawUnsafe("UPDATE operation_views SET called_at = ''");
    const dir = `prisma/migrations/${provider()}`;
    const folder = readdirSync(dir).find((d) => d.endsWith("_queue_call_time"))!;
    const sql = readFileSync(`${dir}/${folder}/migration.sql`, "utf8");
    const backfill = sql.slice(sql.indexOf('UPDATE "operation_views" SET "called_at"'));
    for (const statement of backfill.split(/;\s*\n/).map((s) => s.replace(/^--.*$/gm, "").trim()).filter(Boolean)) await client.$executeRawUnsafe(statement);
    expect(await client.operationView.findMany({ select: { operationId: true, calledAt: true }, orderBy: { operationId: "asc" } })).toEqual(before);
  });
});
