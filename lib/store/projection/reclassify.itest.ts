import { beforeAll, describe, expect, it } from "vitest";
import { REASONS } from "@/lib/domain/outcomes";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";
import { runCliSync } from "@/lib/testing/cli";

/**
 * Issue 54 through the server and the database: a match that shows no fingerprint for an intent
 * that names one is uncertain and goes to review; a verification by presence only is told apart
 * (the operation's `compared`, the metrics page's count); and an operation a projection written
 * by an earlier version still holds as verified on an empty fingerprint is re-classified by
 * projections:rebuild, its records untouched, the overview's rollup counting it once.
 */
let agent: string;
let readToken: string;
beforeAll(async () => {
  agent = (await principal("reviewer", ["ingest", "verify"])).token;
  readToken = (await principal("viewer", ["read"])).token;
});

function cli(args: string[]) {
  return runCliSync(args);
}

const FP = "sha256:1111";
const at = () => new Date(Date.now() - 60_000).toISOString();
const op = (id: string, tool: string, fingerprint: string | undefined, evidence: Record<string, string>) => ({
  operation_id: id,
  tool: { name: tool },
  intent: { effect: "publish one post", ...(fingerprint ? { fingerprint } : {}) },
  receipt: { status: "accepted", receipt_id: `r-${id}`, observed_at: at() },
  canonical_read: { status: "match", observed_at: new Date().toISOString(), evidence },
});

describe("a match that shows nothing is not a verification", () => {
  const tool = unique("tool.empty-body");
  const empty = unique("op-empty");
  const presence = unique("op-presence");
  const compared = unique("op-compared");

  it("is uncertain and needs review; presence only and a compared fingerprint are told apart", async () => {
    const r = await ingest(agent, { records: [op(empty, tool, FP, { object_id: "post-1", fingerprint: "" }), op(presence, tool, undefined, { object_id: "post-2" }), op(compared, tool, FP, { object_id: "post-3", fingerprint: FP })] });
    expect(r.status, r.text).toBe(200);
    const get = async (id: string) => (await call(`/api/v1/operations/${id}`, { token: readToken })).body;
    const e = await get(empty);
    expect([e.outcome, e.reason, e.failure_category, e.needs_review, e.retry.decision]).toEqual(["uncertain", REASONS.fingerprintMissing, 5, true, "blocked until canonical state is reconciled"]);
    expect(e.compared).toMatchObject({ fingerprint_missing: { intent: FP }, presence_only: false });
    const p = await get(presence);
    expect([p.outcome, p.compared.presence_only, p.compared.fingerprint_missing]).toEqual(["verified", true, null]);
    const c = await get(compared);
    expect([c.outcome, c.compared.presence_only]).toEqual(["verified", false]);

    const { presenceOnlyVerified } = await import("@/lib/store/queries/presence-only");
    expect(await presenceOnlyVerified({ tool })).toEqual({ verified: 2, presence_only: 1 });
  });

  it("an operation an earlier version held verified on an empty fingerprint is re-classified by the rebuild, records untouched, counted once", async () => {
    const client = await db();
    const rollups = async () =>
      (await client.outcomeRollup.findMany({ where: { tool, operations: { not: 0 } }, orderBy: [{ effectiveOutcome: "asc" }] })).map((x) => [x.effectiveOutcome, x.needsReview, x.operations]);
    expect(await rollups()).toEqual([["uncertain", true, 1], ["verified", false, 2]]);
    const view = await client.operationView.findUniqueOrThrow({ where: { operationId: empty } });
    // What the projection of a version before issue 54 held: all three verified, none to review.
    await client.operationView.update({ where: { operationId: empty }, data: { outcome: "verified", reason: REASONS.verified, failureCategory: null, effectiveOutcome: "verified", needsReview: false } });
    await client.outcomeRollup.deleteMany({ where: { tool } });
    const day = view.calledAt.slice(0, 10);
    await client.outcomeRollup.create({ data: { day, tool, effectiveOutcome: "verified", needsReview: false, overclaimed: false, operations: 3 } });
    expect(await rollups()).toEqual([["verified", false, 3]]);
    const records = async () => (await client.chainRecord.findMany({ where: { operationId: empty }, orderBy: { seq: "asc" } })).map((x) => [x.seq, x.hash, x.payload]);
    const before = await records();
    expect(before.length).toBeGreaterThan(0);

    const r = cli(["projections:rebuild"]);
    expect(r.status, r.stderr).toBe(0);

    const after = await client.operationView.findUniqueOrThrow({ where: { operationId: empty } });
    expect([after.outcome, after.reason, after.effectiveOutcome, after.needsReview, after.failureCategory]).toEqual(["uncertain", REASONS.fingerprintMissing, "uncertain", true, 5]);
    expect(await rollups()).toEqual([["uncertain", true, 1], ["verified", false, 2]]);
    expect(await records()).toEqual(before);
  });
});
