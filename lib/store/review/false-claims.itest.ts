import { readdirSync, readFileSync } from "node:fs";
import { oneClockRecount } from "@/lib/testing/migrations";
import { beforeAll, describe, expect, it } from "vitest";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";

/**
 * docs/DOMAIN.md "False claims": one resolve sets the outcome and records that the agent's
 * success claim was false; a withdrawn claim stays counted as overclaimed; the review queue
 * counts rejected operations whose agent claimed success and lists them under their own tab.
 */
let ingestToken: string;
let reviewToken: string;

beforeAll(async () => {
  ingestToken = (await principal("reviewer", ["ingest", "verify", "read"])).token;
  reviewToken = (await principal("reviewer", ["review", "read"])).token;
});

const read = async (id: string) => (await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token: ingestToken })).body;
const correct = (id: string, body: Record<string, unknown>) => call(`/api/v1/operations/${encodeURIComponent(id)}/corrections`, { token: reviewToken, body });
const listed = async (query: string) => (await call(`/api/v1/operations?${query}&limit=200`, { token: ingestToken })).body.items.map((i: { operation_id: string }) => i.operation_id) as string[];
const counts = async () => (await import("@/lib/store/queries/overview")).reviewCounts();

/** A refund the payments service refused while the agent told its user it went out. */
async function rejectedRefund(tool = unique("payments.refund")) {
  const id = unique("op-refund");
  const r = await ingest(ingestToken, {
    operation_id: id,
    tool: { name: tool },
    claimed_outcome: "success",
    intent: { effect: "refund order 5531", target: "order 5531" },
    receipt: { status: "rejected", observed_at: new Date(Date.now() - 60_000).toISOString(), error: "card expired" },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id, tool };
}

describe("a false success claim", () => {
  it("a rejected operation whose agent claimed success is in the queue, counted, and under its own tab", async () => {
    const before = await counts();
    const { id, tool } = await rejectedRefund();
    expect(await read(id)).toMatchObject({ effective_outcome: "rejected", needs_review: true, overclaimed: true, claim_withdrawn: false });
    const after = await counts();
    expect(after.rejected).toBe(before.rejected + 1);
    expect(after.overclaimed).toBe(before.overclaimed + 1);
    expect(await listed(`needs_review=true&outcome=rejected&tool=${encodeURIComponent(tool)}`)).toEqual([id]);
  });

  it("one resolve sets not applied and withdraws the claim: off the queue, still overclaimed; a reopen undoes both", async () => {
    const { id, tool } = await rejectedRefund();
    const r = await correct(id, { action: "resolve", outcome: "not_applied", withdraw_claim: true, reason: "the refund never reached the card; the customer was told it had", expected_last_correction_id: null });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.correction).toMatchObject({ action: "resolve", outcome: "not_applied", withdraw_claim: true, outcome_seen: "rejected" });
    expect(r.body.effective_outcome).toBe("not_applied");
    const after = await read(id);
    expect(after).toMatchObject({ outcome: "rejected", effective_outcome: "not_applied", needs_review: false, overclaimed: true, claim_withdrawn: true });
    expect(after.corrections[0].withdraw_claim).toBe(true);
    expect(await listed(`overclaimed=true&tool=${encodeURIComponent(tool)}`)).toEqual([id]);
    expect(await listed(`needs_review=true&tool=${encodeURIComponent(tool)}`)).toEqual([]);
    // The correction is chained with the withdrawal in it: an edit of that flag would break the chain.
    const record = await (await db()).chainRecord.findFirstOrThrow({ where: { kind: "correction", operationId: id } });
    expect(JSON.parse(record.payload)).toMatchObject({ action: "resolve", withdraw_claim: true });

    const reopen = await correct(id, { action: "reopen", reason: "the bank says it may still settle", expected_last_correction_id: r.body.correction.id });
    expect(reopen.status, JSON.stringify(reopen.body)).toBe(201);
    expect(await read(id)).toMatchObject({ effective_outcome: "rejected", needs_review: true, overclaimed: true, claim_withdrawn: false });
  });

  it("resolving as not applied without withdrawing keeps it counted as overclaimed", async () => {
    const { id } = await rejectedRefund();
    expect((await correct(id, { action: "resolve", outcome: "not_applied", reason: "never went out" })).status).toBe(201);
    expect(await read(id)).toMatchObject({ effective_outcome: "not_applied", needs_review: false, overclaimed: true, claim_withdrawn: false });
  });

  it.each([
    ["with verified", { action: "resolve", outcome: "verified", evidence: { object_id: "rf-1" }, withdraw_claim: true }, /the claim was true/],
    ["with a retraction", { action: "retract", withdraw_claim: true }, /only with a resolve/],
    ["not a boolean", { action: "resolve", outcome: "not_applied", withdraw_claim: "yes" }, /withdraw_claim/],
  ])("withdraw_claim %s is refused with 422 and stores nothing", async (_name, body, message) => {
    const { id } = await rejectedRefund();
    const r = await correct(id, { ...body, reason: "checked" });
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(JSON.stringify(r.body.error)).toMatch(message);
    expect((await read(id)).corrections).toEqual([]);
  });

  it("a claim nobody made cannot be withdrawn", async () => {
    const id = unique("op-noclaim");
    const at = new Date(Date.now() - 60_000).toISOString();
    const made = await ingest(ingestToken, { operation_id: id, tool: { name: "db.insert" }, intent: { effect: "insert a row" }, receipt: { status: "accepted", observed_at: at }, canonical_read: { status: "absent", observed_at: at } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const r = await correct(id, { action: "resolve", outcome: "not_applied", withdraw_claim: true, reason: "absent" });
    expect(r.status).toBe(422);
    expect(r.body.error.message).toMatch(/claimed no success/);
  });
});

describe("the false_claims migration's backfill", () => {
  // It runs the migration over every operation of the suite's database: how long depends on how many
  // the files before it left (18 s in a fresh clone's order; 97 s when run last on a loaded machine).
  it("counts what the projection counts, for every operation the migration could have met", { timeout: 300_000 }, async () => {
    const { provider } = await import("@/lib/store/db/database");
    const client = await db();
    // A retracted claim and a not_applied claim: both off the count before the migration.
    const retracted = (await rejectedRefund()).id;
    expect((await correct(retracted, { action: "retract", reason: "false" })).status).toBe(201);
    const notApplied = (await rejectedRefund()).id;
    expect((await correct(notApplied, { action: "resolve", outcome: "not_applied", reason: "absent" })).status).toBe(201);

    const cols = { operationId: true, overclaimed: true } as const;
    const before = await client.operationView.findMany({ select: cols, orderBy: { operationId: "asc" } });
    const rollups = async () => (await client.outcomeRollup.findMany()).filter((r) => r.operations !== 0).map((r) => JSON.stringify(r)).sort();
    const rollupsBefore = await rollups();

    // As the migration found them: the old rule (no withdrawn claim, not yet reconciled). A
    // resolve that withdrew a claim did not exist then: those operations keep today's value.
    const retract = provider() === "postgresql" ? `(c.payload::jsonb ->> 'action') = 'retract'` : `json_extract(c.payload, '$.action') = 'retract'`;
    const withdraw = provider() === "postgresql" ? `(c.payload::jsonb ->> 'withdraw_claim') = 'true'` : `json_extract(c.payload, '$.withdraw_claim') = 1`;
    const has = (cond: string) => `EXISTS (SELECT 1 FROM chain_records c WHERE c.kind = 'correction' AND c.operation_id = operation_views.operation_id AND ${cond})`;
    await client.$executeRawUnsafe(
      `UPDATE operation_views SET overclaimed = (claimed_outcome IS NOT NULL AND claimed_outcome = 'success' AND effective_outcome IN ('uncertain', 'divergent', 'rejected') AND NOT ${has(retract)}) WHERE NOT ${has(withdraw)}`,
    );
    await client.$executeRawUnsafe("DELETE FROM outcome_rollups");
    expect((await client.operationView.findUniqueOrThrow({ where: { operationId: retracted } })).overclaimed).toBe(false);
    expect((await client.operationView.findUniqueOrThrow({ where: { operationId: notApplied } })).overclaimed).toBe(false);

    const dir = `prisma/migrations/${provider()}`;
    const folder = readdirSync(dir).find((d) => d.endsWith("_false_claims"))!;
    const sql = readFileSync(`${dir}/${folder}/migration.sql`, "utf8");
    for (const statement of sql.split(/;\s*\n/).map((s) => s.replace(/^--.*$/gm, "").trim()).filter(Boolean)) await client.$executeRawUnsafe(statement);
    // Then, as an upgrade runs it, the later migration that counts the rollups by the day of the call.
    for (const statement of oneClockRecount(provider())) await client.$executeRawUnsafe(statement);

    expect(await client.operationView.findMany({ select: cols, orderBy: { operationId: "asc" } })).toEqual(before);
    expect(await rollups()).toEqual(rollupsBefore);
  });
});
