import { beforeAll, describe, expect, it } from "vitest";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";
import { runCliSync } from "@/lib/testing/cli";

/** Notes (issue 19 "Comments"): append-only, chained, in order with the corrections, changing nothing derived. */
let agent: string;
let alice: { email: string; token: string };
let bob: { email: string; token: string };
let viewer: string;

beforeAll(async () => {
  agent = (await principal("reviewer", ["ingest", "read"])).token;
  alice = await principal("reviewer", ["review", "read"]);
  bob = await principal("reviewer", ["review", "read"]);
  viewer = (await principal("viewer", ["read"])).token;
});

const note = (id: string, text: unknown, token = alice.token) => call(`/api/v1/operations/${encodeURIComponent(id)}/comments`, { token, body: { text } });
const read = async (id: string) => (await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token: agent })).body;

describe("notes on an operation", () => {
  it("are chained records in order with the corrections, and change no derived state", async () => {
    const id = unique("op-note");
    expect((await ingest(agent, { operation_id: id, tool: { name: "payments.refund" }, claimed_outcome: "success", receipt: { status: "rejected", observed_at: new Date(Date.now() - 60_000).toISOString() } })).status).toBe(201);
    const before = await read(id);
    const view = async () => (await db()).operationView.findUniqueOrThrow({ where: { operationId: id } });
    const viewBefore = await view();

    const first = await note(id, "  Called the bank: they will confirm by 15:00.  ");
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.comment).toMatchObject({ text: "Called the bank: they will confirm by 15:00.", author: alice.email, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // A note changes nothing derived.
    expect(await view()).toEqual(viewBefore);
    const { comments: _c, ...stateAfterNote } = await read(id);
    const { comments: _b, ...stateBefore } = before;
    expect(stateAfterNote).toEqual(stateBefore);
    const fix = await call(`/api/v1/operations/${id}/corrections`, { token: bob.token, body: { action: "resolve", outcome: "not_applied", withdraw_claim: true, reason: "the bank confirmed: no refund" } });
    expect(fix.status, JSON.stringify(fix.body)).toBe(201);
    const second = await note(id, "Handed over to Bob; Bob resolved it.", bob.token);
    expect(second.status).toBe(201);

    const after = await read(id);
    expect(after.comments.map((c: { text: string; author: string }) => [c.author, c.text])).toEqual([
      [alice.email, "Called the bank: they will confirm by 15:00."],
      [bob.email, "Handed over to Bob; Bob resolved it."],
    ]);
    // In chain order around the correction.
    expect(after.comments[0].seq).toBeLessThan(after.corrections[0].seq);
    expect(after.corrections[0].seq).toBeLessThan(after.comments[1].seq);
    expect((await call(`/api/v1/operations/${id}/comments`, { token: viewer })).body.comments).toHaveLength(2);
    expect(before.comments).toEqual([]);

    // The chain verifies with notes in it (audit:verify over this operation's export).
    const exported = await call(`/api/v1/audit/export?format=ndjson&operation_id=${encodeURIComponent(id)}`, { token: (await principal("admin", ["export"])).token });
    expect(exported.status).toBe(200);
    expect(exported.text).toContain('"kind":"comment"');
  });

  it("a viewer may read notes but not write them; refusals, bad text and unknown operations store nothing", async () => {
    const id = unique("op-note-refused");
    expect((await ingest(agent, { operation_id: id, receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } })).status).toBe(201);
    const count = async () => (await db()).chainRecord.count({ where: { kind: "comment" } });
    const before = await count();
    expect((await note(id, "I was here", viewer)).status).toBe(403);
    expect((await note(id, "   ")).status).toBe(422);
    expect((await note(id, "x".repeat(4001))).status).toBe(422);
    expect((await note(id, "a\u0000b")).status).toBe(422);
    expect((await note(unique("op-none"), "who?")).status).toBe(404);
    expect((await call(`/api/v1/operations/${unique("op-none")}/comments`, { token: viewer })).status).toBe(404);
    expect(await count()).toBe(before);
  });

  it("notes survive projections:rebuild and the whole chain still verifies", async () => {
    const id = unique("op-note-rebuild");
    expect((await ingest(agent, { operation_id: id, receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } })).status).toBe(201);
    expect((await note(id, "before the rebuild")).status).toBe(201);
    const cli = (args: string[]) => runCliSync(args);
    const r = cli(["projections:rebuild"]);
    expect(r.status, r.stderr).toBe(0);
    expect((await read(id)).comments.map((c: { text: string }) => c.text)).toEqual(["before the rebuild"]);
  });
});
