import { beforeAll, describe, expect, it } from "vitest";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";

/** The act a status names (lib/domain/status.ts), looked up for a page of list items. */
type Who = { email: string; token: string };
let agent: Who;
let alice: Who;
let bob: Who;

beforeAll(async () => {
  agent = await principal("reviewer", ["ingest", "verify", "read"]);
  alice = await principal("reviewer", ["review", "read"]);
  bob = await principal("reviewer", ["review", "read"]);
});

const correct = async (id: string, who: Who, body: Record<string, unknown>) => {
  const r = await call(`/api/v1/operations/${id}/corrections`, { token: who.token, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.correction as { id: string; recorded_at: string };
};

describe("the correction a list row's status names", () => {
  it("is the resolve in effect, or the retraction still in effect after a resolve and a reopen", async () => {
    const { correctionActsOf } = await import("@/lib/store/queries/list-operations");
    const at = new Date(Date.now() - 60_000).toISOString();
    const resolved = unique("op-status-resolved");
    const retracted = unique("op-status-retracted");
    const plain = unique("op-status-plain");
    expect((await ingest(agent.token, { operation_id: resolved, receipt: { status: "accepted", observed_at: at }, canonical_read: { status: "absent", observed_at: at } })).status).toBe(201);
    expect((await ingest(agent.token, { operation_id: retracted, claimed_outcome: "success", receipt: { status: "accepted", observed_at: at }, canonical_read: { status: "match", observed_at: at, evidence: { object_id: "o-1" } } })).status).toBe(201);
    expect((await ingest(agent.token, { operation_id: plain, receipt: { status: "accepted", observed_at: at }, canonical_read: { status: "absent", observed_at: at } })).status).toBe(201);

    const first = await correct(resolved, alice, { action: "resolve", outcome: "compensated", reason: "undone" });
    const reopened = await correct(resolved, bob, { action: "reopen", reason: "not so sure", expected_last_correction_id: first.id });
    const again = await correct(resolved, bob, { action: "resolve", outcome: "not_applied", reason: "never written", expected_last_correction_id: reopened.id });

    const withdrawn = await correct(retracted, alice, { action: "retract", reason: "the object is someone else's" });
    const then = await correct(retracted, bob, { action: "resolve", outcome: "not_applied", reason: "gone", expected_last_correction_id: withdrawn.id });
    await correct(retracted, bob, { action: "reopen", reason: "looking again", expected_last_correction_id: then.id });

    const views = await (await db()).operationView.findMany({ where: { operationId: { in: [resolved, retracted, plain] } }, select: { operationId: true, review: true } });
    const items = views.map((v) => ({ operation_id: v.operationId, review: v.review }));
    expect(Object.fromEntries(items.map((i) => [i.operation_id, i.review]))).toEqual({ [resolved]: "not_applied", [retracted]: "retracted", [plain]: "none" });
    const acts = await correctionActsOf(items);
    expect(acts.get(resolved)).toEqual({ reviewer: bob.email, recorded_at: again.recorded_at, withdraw_claim: false });
    expect(acts.get(retracted)).toEqual({ reviewer: alice.email, recorded_at: withdrawn.recorded_at, withdraw_claim: false });
    expect(acts.has(plain)).toBe(false);
  });
});
