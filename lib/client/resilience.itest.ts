/**
 * The client when Reconcile is not there for it, against the real server behind a proxy the test
 * controls: down while the agent runs (the agent's calls still succeed; the records arrive when
 * it is back), a 429 storm (back-pressure within the memory bound; nothing lost), and strict mode.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";
import { TestProxy } from "./testing/proxy";
import { Reconcile, ReconcileUnavailableError, type ClientEvent } from "./src/index";

let token: string;
beforeAll(async () => {
  token = (await principal("viewer", ["ingest", "read"])).token;
});

let proxy: TestProxy | null = null;
afterEach(async () => {
  await proxy?.stop();
  proxy = null;
});

const stagesOf = async (id: string) => {
  const r = await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token });
  return r.status === 200 ? r.body.stages.map((s: { stage: string }) => s.stage) : r.status;
};

/** A tool that sends an email and notes that it did; the guard names each call's operation. */
function mailer(rc: Reconcile) {
  const performed: string[] = [];
  const send = rc.guard(
    "mail.send",
    async (input: { to: string }, c) => {
      performed.push(c.operationId);
      return { message_id: `m-${input.to}` };
    },
    { intent: (input) => ({ effect: "send one email", params: input }), receipt: (r) => ({ receipt_id: r.message_id }) },
  );
  return { send, performed };
}

describe("Reconcile down while the agent runs", () => {
  it("the agent's calls succeed without waiting on it; the records arrive, in full, once it is back", async () => {
    proxy = await TestProxy.start(baseUrl);
    await proxy.stop(); // its port now refuses connections
    const events: ClientEvent[] = [];
    // An intent bound of two minutes: a call that waited it out while Reconcile is down would run
    // into the test's own time limit (60 s), without a clock in the test that a busy machine could trip.
    const rc = new Reconcile({ url: proxy.url, token, trajectoryId: unique("down"), intentTimeoutMs: 120_000, backoff: { initialMs: 50, maxMs: 400 }, onEvent: (e) => events.push(e) });
    const { send, performed } = mailer(rc);

    for (let i = 0; i < 10; i++) expect(await send({ to: `user${i}@example.com` })).toEqual({ message_id: `m-user${i}@example.com` });
    expect(performed).toHaveLength(10);
    expect(rc.stats()).toMatchObject({ queued: 20, delivered: 0, rejected: 0, dropped: 0 });
    expect(events.some((e) => e.kind === "retrying" && e.status === null)).toBe(true);
    for (const id of performed) expect(await stagesOf(id)).toBe(404);

    await proxy.listen(); // back, on the same port
    expect(await rc.flush(15_000)).toMatchObject({ queued: 0, delivered: 20, rejected: 0, dropped: 0 });
    for (const id of performed) expect(await stagesOf(id)).toEqual(["intent", "receipt"]);
    await rc.close();
  });

  it("strict: the tool is not called when its intent cannot be stored, and the intent is not sent later", async () => {
    proxy = await TestProxy.start(baseUrl);
    await proxy.stop();
    const rc = new Reconcile({ url: proxy.url, token, strict: true, intentTimeoutMs: 300, backoff: { initialMs: 50, maxMs: 100 }, onEvent: () => {} });
    const { send, performed } = mailer(rc);
    await expect(send({ to: "nobody@example.com" })).rejects.toBeInstanceOf(ReconcileUnavailableError);
    expect(performed).toEqual([]);
    // Withdrawn, and counted: at once when it was waiting, or when the request carrying it
    // fails (a loaded machine can still be connecting when the 300 ms are up).
    await rc.flush(5_000);
    expect(rc.stats()).toMatchObject({ queued: 0, dropped: 1 });
    await proxy.listen();
    // Once Reconcile answers, the same client records and calls as usual.
    await send({ to: "somebody@example.com" });
    expect(performed).toHaveLength(1);
    expect(await rc.close()).toMatchObject({ delivered: 2, dropped: 1 });
    expect(await stagesOf(performed[0])).toEqual(["intent", "receipt"]);
  });
});

describe("a 429 storm", () => {
  it("back-pressure keeps the queue within its bound, Retry-After is honoured, and nothing is lost", async () => {
    proxy = await TestProxy.start(baseUrl);
    let stormUntil = 0;
    proxy.decide = () => {
      stormUntil ||= Date.now() + 2_500;
      if (Date.now() >= stormUntil) return null;
      return { status: 429, headers: { "retry-after": "1" }, body: JSON.stringify({ error: { code: "overloaded", message: "the ingest queue is full" } }) };
    };
    const trajectory = unique("storm");
    const bounds = { maxQueueRecords: 8, maxQueueBytes: 4_096 };
    const rc = new Reconcile({ url: proxy.url, token, trajectoryId: trajectory, ...bounds, backpressureTimeoutMs: 60_000, flushIntervalMs: 20, backoff: { initialMs: 20, maxMs: 3_000 }, onEvent: () => {} });
    const { send, performed } = mailer(rc);

    // Four agents, ten calls each.
    await Promise.all([0, 1, 2, 3].map(async (agent) => {
      for (let i = 0; i < 10; i++) await send({ to: `a${agent}-${i}@example.com` });
    }));
    expect(performed).toHaveLength(40);
    const stats = await rc.flush(30_000);
    expect(stats).toMatchObject({ queued: 0, delivered: 80, rejected: 0, dropped: 0 });
    expect(stats.peak_queued).toBeLessThanOrEqual(bounds.maxQueueRecords);
    expect(stats.peak_queued_bytes).toBeLessThanOrEqual(bounds.maxQueueBytes);
    expect(stats.peak_queued).toBe(bounds.maxQueueRecords); // the bound was reached: the storm did push back

    const posts = proxy.seen.filter((s) => s.method === "POST");
    const refused = posts.filter((s) => s.answered === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      const next = posts[posts.indexOf(r) + 1];
      expect(next.at - r.at).toBeGreaterThanOrEqual(950); // Retry-After: 1 (the clock's granularity aside)
    }

    const listed = await call(`/api/v1/operations?trajectory_id=${trajectory}&limit=200`, { token });
    expect(listed.body.items).toHaveLength(40);
    expect(new Set(listed.body.items.map((i: { operation_id: string }) => i.operation_id))).toEqual(new Set(performed));
    expect(listed.body.items.every((i: { receipt_status: string }) => i.receipt_status === "accepted")).toBe(true);
    await rc.close();
  });
});
