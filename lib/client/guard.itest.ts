/**
 * The client's guard against the real server: the essay's X post end to end (receipt accepted,
 * read absent → divergent, no retry), a definite refusal against a call of unknown fate, and
 * the rule that an idempotency key alone never unblocks a retry.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";
import essay from "@/lib/domain/fixtures/essay-x-post.json";
import { Reconcile, RetryBlockedError, ToolRefusal, type ClientEvent } from "./src/index";

let agent: { token: string }; // reviewer: ingest + verify + read, an agent that reads back its own writes
beforeAll(async () => {
  agent = await principal("reviewer", ["ingest", "verify", "read"]);
});

const read = async (id: string, token = agent.token) => call(`/api/v1/operations/${encodeURIComponent(id)}`, { token });
const client = (token = agent.token, events: ClientEvent[] = []) => new Reconcile({ url: baseUrl, token, onEvent: (e) => events.push(e) });

describe("the essay's X post, through guard", () => {
  it("records the intent before the call, the accepted receipt after, the absent read: divergent, and no retry", async () => {
    const rc = client();
    const operationId = unique("x-post");
    const [, absent] = essay.record.canonical_read;
    let calls = 0;
    let intentOnServerDuringCall: unknown = null;
    const postToX = async (input: { text: string }) => {
      calls++;
      // The intent is on the server before the tool is called (a crash from here on leaves it uncertain).
      const seen = await read(operationId);
      intentOnServerDuringCall = { status: seen.status, stages: seen.body?.stages?.map((s: { stage: string }) => s.stage) };
      return { id: essay.record.receipt.receipt_id, text: input.text };
    };
    const publish = rc.guard("social.publish", postToX, {
      intent: () => ({ target: essay.record.intent.target, effect: essay.record.intent.effect, fingerprint: essay.record.intent.fingerprint }),
      receipt: (post) => ({ receipt_id: post.id }),
      verify: async () => ({ status: "absent", evidence: absent.evidence, reader: absent.reader }),
      operationId: () => operationId,
    });

    const post = await publish({ text: "the essay's post" });
    expect(post.id).toBe(essay.record.receipt.receipt_id); // the tool's result, unchanged
    expect(intentOnServerDuringCall).toEqual({ status: 200, stages: ["intent"] });
    await rc.record({ operation_id: operationId, claimed_outcome: "success", side_effects: essay.record.side_effects as never });
    expect(await rc.flush()).toMatchObject({ queued: 0, delivered: 4, rejected: 0, dropped: 0 });

    const op = (await read(operationId)).body;
    expect(op.stages.map((s: { stage: string }) => s.stage)).toEqual(["intent", "receipt", "canonical_read", "side_effects"]);
    expect(op.tool).toEqual({ name: "social.publish" });
    expect(op.stages[1].payload).toMatchObject({ status: "accepted", receipt_id: essay.record.receipt.receipt_id });
    const expected = essay.expected;
    expect(op).toMatchObject({ outcome: expected.outcome, reason: expected.reason, failure_category: expected.failure_category, observed_side_effects: expected.observed_side_effects, retry: expected.retry });

    expect(await rc.mayRetry(operationId)).toEqual({ allowed: false, reason: expected.retry.decision, safe_replay_available: false, outcome: "divergent" });
    // The caller's own retry of the same logical call is the same operation, and it is blocked.
    const again = await publish({ text: "the essay's post" }).catch((e) => e);
    expect(again).toBeInstanceOf(RetryBlockedError);
    expect(again.gate.reason).toBe(expected.retry.decision);
    expect(calls).toBe(1);
    await rc.close();
  });

  it("a match with evidence after the accepted receipt: verified, and still no retry", async () => {
    const rc = client();
    let operationId = "";
    const publish = rc.guard(
      "social.publish",
      async (input: { text: string }, c) => {
        operationId = c.operationId; // a new random id: no operationId option
        return { id: "post-1", text: input.text };
      },
      { intent: (input) => ({ effect: "publish exactly one post", params: input }), verify: (_input, post) => ({ status: "match", evidence: { object_id: post.id } }) },
    );
    await publish({ text: "hello" });
    await rc.flush();
    expect((await read(operationId)).body).toMatchObject({ outcome: "verified", retry: { automatic: false, decision: "do not retry: the effect is verified" } });
    expect((await rc.mayRetry(operationId)).allowed).toBe(false);
    await rc.close();
  });
});

describe("a refusal is a receipt; an error of unknown fate is not", () => {
  it("ToolRefusal records a rejected receipt, and the caller gets the same error", async () => {
    const rc = client();
    const id = unique("refused");
    const refusal = new ToolRefusal("duplicate content", { receiptId: "x-403-187" });
    const publish = rc.guard("social.publish", async (_input: { text: string }) => Promise.reject(refusal), { intent: (i) => ({ params: i }), operationId: () => id });
    expect(await publish({ text: "again" }).catch((e) => e)).toBe(refusal);
    await rc.flush();
    const op = (await read(id)).body;
    expect(op).toMatchObject({ outcome: "rejected", reason: "the write boundary did not accept the operation" });
    expect(op.stages[1].payload).toMatchObject({ status: "rejected", receipt_id: "x-403-187" });
    await rc.close();
  });

  it("isRefusal marks the errors a tool's own client throws for a definite no", async () => {
    class HttpError extends Error {
      constructor(readonly status: number) {
        super(`HTTP ${status}`);
      }
    }
    const rc = client();
    const [refusedId, unknownId] = [unique("http-403"), unique("http-504")];
    const send = rc.guard("mail.send", async (input: { id: string; status: number }) => Promise.reject(new HttpError(input.status)), {
      intent: () => ({ effect: "send one email" }),
      operationId: (input) => input.id,
      isRefusal: (e) => e instanceof HttpError && e.status >= 400 && e.status < 500,
    });
    await expect(send({ id: refusedId, status: 403 })).rejects.toThrow("HTTP 403");
    await expect(send({ id: unknownId, status: 504 })).rejects.toThrow("HTTP 504");
    await rc.flush();
    expect((await read(refusedId)).body).toMatchObject({ outcome: "rejected" });
    const unknown = (await read(unknownId)).body;
    expect(unknown.stages.map((s: { stage: string }) => s.stage)).toEqual(["intent"]);
    expect(unknown).toMatchObject({ outcome: "uncertain", reason: "no receipt recorded" });
    await rc.close();
  });

  it("a timeout leaves no receipt: the operation stays uncertain and the retry is blocked", async () => {
    const rc = client();
    const id = unique("timeout");
    let calls = 0;
    const charge = rc.guard(
      "payments.charge",
      async (_input: { cents: number }) => {
        calls++;
        throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      },
      { intent: (i) => ({ effect: "charge the card once", params: i }), operationId: () => id, idempotency: { enforced: true } },
    );
    await expect(charge({ cents: 1200 })).rejects.toThrow("socket hang up");
    await rc.flush();
    expect((await read(id)).body).toMatchObject({ outcome: "uncertain", reason: "no receipt recorded", stages: [{ stage: "intent" }] });
    // Essay test 9: the enforced key makes a reviewed replay available, never an automatic retry.
    const gate = await rc.mayRetry(id);
    expect(gate).toEqual({ allowed: false, reason: "blocked until canonical state is reconciled", safe_replay_available: true, key: id, outcome: "uncertain" });
    await expect(charge({ cents: 1200 })).rejects.toBeInstanceOf(RetryBlockedError);
    expect(calls).toBe(1);
    await rc.close();
  });
});

describe("what the server refuses is counted and reported, never thrown into the agent", () => {
  it("a token without the verify scope: the call succeeds, the receipt is stored, the read is refused and counted", async () => {
    const ingestOnly = await principal("viewer", ["ingest", "read"]);
    const events: ClientEvent[] = [];
    const rc = client(ingestOnly.token, events);
    const id = unique("no-verify");
    const publish = rc.guard("social.publish", async () => ({ id: "p-1" }), {
      intent: () => ({ effect: "publish exactly one post" }),
      verify: () => ({ status: "match", evidence: { object_id: "p-1" } }),
      operationId: () => id,
    });
    expect(await publish(undefined)).toEqual({ id: "p-1" });
    expect(await rc.flush()).toMatchObject({ delivered: 2, rejected: 1, dropped: 0, queued: 0 });
    expect(events).toContainEqual(expect.objectContaining({ kind: "rejected", operation_id: id, status: 403, code: "verify_scope_required" }));
    expect((await read(id, ingestOnly.token)).body).toMatchObject({ outcome: "uncertain", stages: [{ stage: "intent" }, { stage: "receipt" }] });
    await rc.close();
  });

  it("mayRetry for an operation the server has never seen: closed", async () => {
    const rc = client();
    expect(await rc.mayRetry(unique("never-sent"))).toEqual({ allowed: false, reason: "Reconcile has no record of this operation", safe_replay_available: false });
    await rc.close();
  });
});
