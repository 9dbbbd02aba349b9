import { beforeAll, describe, expect, it } from "vitest";
import essay from "@/lib/domain/fixtures/essay-x-post.json";
import { call, chainCount, db, ingest, principal, unique } from "@/lib/testing/integration";

/** Claims mean something (docs/API.md "Claims (the review queue)"): only the holder or an admin releases; nobody else corrects. */
type Who = { email: string; token: string };
let agent: Who;
let alice: Who;
let bob: Who;
let admin: Who;

beforeAll(async () => {
  // The essay's record carries canonical reads: sent by a reviewer's token with the verify scope.
  agent = await principal("reviewer", ["ingest", "verify", "read"]);
  alice = await principal("reviewer", ["review", "read"]);
  bob = await principal("reviewer", ["review", "read"]);
  admin = await principal("admin", ["review", "read"]);
});

async function essayOperation() {
  const id = unique("op-claim");
  expect((await ingest(agent.token, { ...essay.record, operation_id: id })).status).toBe(201);
  return id;
}

const claim = (id: string, who: Who, body: unknown = {}) => call(`/api/v1/operations/${id}/claim`, { token: who.token, body });
const release = (id: string, who: Who) => call(`/api/v1/operations/${id}/claim`, { token: who.token, method: "DELETE" });
const holder = async (id: string) => (await call(`/api/v1/operations/${id}/claim`, { token: alice.token })).body.holder;
const resolve = (id: string, who: Who, expected: string | null = null) =>
  call(`/api/v1/operations/${id}/corrections`, { token: who.token, body: { action: "resolve", outcome: "not_applied", reason: `checked by ${who.email}`, expected_last_correction_id: expected } });
const assignments = async (id: string) => (await db()).chainRecord.count({ where: { kind: "assignment", operationId: id } });

describe("releasing a claim", () => {
  it("only the holder or an admin releases; anyone else gets 409 claimed_by_other naming the holder, and nothing is stored", async () => {
    const id = await essayOperation();
    expect(await holder(id)).toBeNull();
    expect((await claim(id, alice)).body).toMatchObject({ holder: alice.email, previous: null });

    const before = await chainCount();
    const refused = await release(id, bob);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "claimed_by_other", details: { operation_id: id, holder: alice.email } });
    expect(refused.body.error.message).toContain(alice.email);
    expect(await chainCount()).toBe(before);
    expect(await holder(id)).toBe(alice.email);

    // The holder releases her own claim.
    expect((await release(id, alice)).body).toMatchObject({ holder: null, previous: alice.email });
    expect(await holder(id)).toBeNull();

    // An admin releases anyone's, and the record says who released whose.
    await claim(id, bob);
    const byAdmin = await release(id, admin);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.previous).toBe(bob.email);
    const last = await (await db()).chainRecord.findFirst({ where: { kind: "assignment", operationId: id }, orderBy: { seq: "desc" } });
    expect(last?.actor).toBe(admin.email);
    expect(JSON.parse(last!.payload)).toEqual({ action: "release", assignee: null, previous: bob.email });
  });

  it("claiming what another holds needs take_over, which is recorded naming them", async () => {
    const id = await essayOperation();
    await claim(id, alice);
    const refused = await claim(id, bob);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "claimed_by_other", details: { holder: alice.email } });
    const taken = await claim(id, bob, { take_over: true });
    expect(taken.body).toMatchObject({ holder: bob.email, previous: alice.email });
    expect(await assignments(id)).toBe(2);
  });

  it("bad input is a 4xx and stores nothing; viewers may not claim", async () => {
    const id = await essayOperation();
    const viewer = await principal("viewer", ["read"]);
    const before = await chainCount();
    expect((await claim(id, alice, { take_over: "yes" })).status).toBe(422);
    expect((await claim(id, alice, { note: 1 })).status).toBe(422);
    expect((await call(`/api/v1/operations/${id}/claim`, { token: alice.token, raw: "{" })).status).toBe(400);
    expect((await claim("op-no-such-operation", alice)).status).toBe(404);
    expect((await release("op-no-such-operation", alice)).status).toBe(404);
    expect((await call("/api/v1/operations/op-no-such-operation/claim", { token: alice.token })).status).toBe(404);
    expect((await release(id, viewer)).status).toBe(403);
    expect((await claim(id, { email: "", token: "" })).status).toBe(401);
    expect(await assignments(id)).toBe(0);
    // Refusals are security events; nothing else was written.
    expect(await (await db()).chainRecord.count({ where: { kind: { not: "security" }, seq: { gt: before } } })).toBe(0);
  });
});

describe("correcting a claimed operation", () => {
  it("is 409 claimed_by_other for another reviewer and for an admin, until they take it over", async () => {
    const id = await essayOperation();
    await claim(id, alice);
    const before = await chainCount();
    for (const who of [bob, admin]) {
      const r = await resolve(id, who);
      expect(r.status).toBe(409);
      expect(r.body.error).toMatchObject({ code: "claimed_by_other", details: { operation_id: id, holder: alice.email } });
    }
    expect(await chainCount()).toBe(before);
    expect((await call(`/api/v1/operations/${id}`, { token: alice.token })).body.corrections).toEqual([]);

    // Taking over is the recorded act that lets bob correct it; now alice is the other one.
    await claim(id, bob, { take_over: true });
    // While bob holds it, alice is the other one.
    expect((await resolve(id, alice)).body.error).toMatchObject({ code: "claimed_by_other", details: { holder: bob.email } });
    const done = await resolve(id, bob);
    expect(done.status).toBe(201);
    // The correction ends bob's claim: a release recorded right after it, in its transaction.
    expect(await holder(id)).toBeNull();
    const records = await (await db()).chainRecord.findMany({ where: { operationId: id, kind: { in: ["assignment", "correction"] } }, orderBy: { seq: "asc" } });
    expect(records.map((r) => [r.kind, r.actor, JSON.parse(r.payload).action])).toEqual([
      ["assignment", alice.email, "claim"],
      ["assignment", bob.email, "claim"],
      ["correction", bob.email, "resolve"],
      ["assignment", bob.email, "release"],
    ]);
    // Right after it: the release links to the correction, nothing between them in their chain.
    expect(records[3].prevHash).toBe(records[2].hash);
    const reopen = await call(`/api/v1/operations/${id}/corrections`, {
      token: alice.token,
      body: { action: "reopen", reason: "I was still on it", expected_last_correction_id: done.body.correction.id },
    });
    expect(reopen.status).toBe(201);
  });

  it("an unclaimed operation, or one the actor holds, is corrected as before", async () => {
    const free = await essayOperation();
    expect((await resolve(free, bob)).status).toBe(201);
    const mine = await essayOperation();
    await claim(mine, alice);
    expect((await resolve(mine, alice)).status).toBe(201);
  });

  it("is decided inside the correction's transaction: a correction racing a claim never lands after it", async () => {
    for (let i = 0; i < 6; i++) {
      const id = await essayOperation();
      const [claimed, corrected] = await Promise.all([claim(id, alice), resolve(id, bob)]);
      expect(claimed.status).toBe(200);
      expect([201, 409]).toContain(corrected.status);
      const records = await (await db()).chainRecord.findMany({ where: { operationId: id, kind: { in: ["assignment", "correction"] } }, orderBy: { seq: "asc" } });
      if (corrected.status === 201) expect(records.map((r) => r.kind)).toEqual(["correction", "assignment"]);
      else {
        expect(corrected.body.error.code).toBe("claimed_by_other");
        expect(records.map((r) => r.kind)).toEqual(["assignment"]);
      }
    }
  });
});

describe("what a reviewer holds (the queue's \"assigned to me\")", () => {
  it("is every operation whose latest assignment is their claim: not what was taken over, released or corrected", async () => {
    const { heldBy } = await import("@/lib/store/review/assignments");
    const { listOperations, listQuerySchema } = await import("@/lib/store/queries/list-operations");
    const [kept, taken, released, corrected, never] = [await essayOperation(), await essayOperation(), await essayOperation(), await essayOperation(), await essayOperation()];
    for (const id of [kept, taken, released, corrected]) expect((await claim(id, alice)).status).toBe(200);
    expect((await claim(taken, bob, { take_over: true })).status).toBe(200);
    expect((await release(released, alice)).status).toBe(200);
    expect((await resolve(corrected, alice)).status).toBe(201);
    const mine = await heldBy(alice.email);
    expect(mine).toContain(kept);
    for (const id of [taken, released, corrected, never]) expect(mine).not.toContain(id);
    expect(await heldBy(bob.email)).toContain(taken);
    // The queue lists exactly those that still need review.
    const queue = await listOperations(listQuerySchema.parse({ needs_review: "true", limit: "200" }), mine);
    expect(queue.items.map((i) => i.operation_id)).toContain(kept);
    expect(queue.items.every((i) => mine.includes(i.operation_id))).toBe(true);
    expect((await listOperations(listQuerySchema.parse({}), [])).items).toEqual([]);
  });
});
