/**
 * The outbox across a crash: the server is SIGKILLed while ingest requests are committing, with
 * its job worker off (RECONCILE_JOBS=off), so every event it committed is still undelivered when
 * it dies. After a restart with the worker on, every operation that committed is announced, and
 * nothing is announced of a request the crash cut off before its commit. The verdict export's
 * outbox (lib/verdicts/, OpenTelemetry events to a logs receiver) is held to the same: each
 * committed operation's verdict is sent, nothing else.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { divergentRecord } from "@/lib/reliability/harness";
import { startReceiver, type Receiver } from "./testing/receiver";
import { startWebhookApp, until, type WebhookApp } from "./testing/app";
import { startLogsReceiver, type LogsReceiver } from "@/lib/verdicts/testing/otlp-logs-receiver";

let w: WebhookApp;
let rx: Receiver;
let otlp: LogsReceiver;

beforeAll(async () => {
  rx = await startReceiver();
  otlp = await startLogsReceiver();
  w = await startWebhookApp("webhooks_crash", { RECONCILE_JOBS: "off", RECONCILE_VERDICT_OTLP_ENDPOINT: otlp.url, RECONCILE_VERDICT_ALLOW_HTTP: "1", RECONCILE_VERDICT_ALLOW_PRIVATE: "1" });
});
afterAll(async () => {
  await w?.app.stop();
  await rx?.close();
  await otlp?.close();
  await w?.db.drop();
});

describe("webhooks across a SIGKILL", () => {
  it("what committed before the kill is delivered after the restart; nothing else is announced", async () => {
    const created = await w.api("/api/v1/webhooks", { body: { url: rx.url("/crash"), filters: { event_types: ["operation.needs_review"] } } });
    expect(created.status).toBe(201);
    rx.secrets.set("/crash", created.body.secret);

    // Eight writers send divergent operations until the server dies under them.
    const answered = new Set<string>();
    let n = 0;
    let killed = false;
    const writer = async (k: number) => {
      while (!killed) {
        const id = `op-crash-${k}-${n++}`;
        try {
          const res = await fetch(`${w.app.base}/api/v1/receipts`, {
            method: "POST",
            headers: { authorization: `Bearer ${w.tokens.ingest}`, "content-type": "application/json" },
            body: JSON.stringify({ records: [divergentRecord(id, "crash"), divergentRecord(`${id}-b`, "crash")] }),
          });
          if (res.ok) {
            await res.text();
            answered.add(id).add(`${id}-b`);
          }
        } catch {
          // the server died under this request: it may or may not have committed
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, k) => writer(k));
    await until("some answers", () => answered.size >= 100, 30_000);
    await w.app.kill();
    killed = true;
    await Promise.all(writers);
    expect(rx.received).toEqual([]);

    const committed = new Set((await w.db.query<{ operation_id: string }>("SELECT operation_id FROM operations")).map((r) => r.operation_id));
    for (const id of answered) expect(committed.has(id), `${id} was answered 2xx but is not stored`).toBe(true);

    await w.restart({ RECONCILE_JOBS: "on" });
    const ids = () => new Set(rx.received.map((r) => r.body.data?.operation_id as string));
    await until("every committed operation announced", () => [...committed].every((id) => ids().has(id)), 120_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(rx.received.every((r) => r.verified && r.body.type === "operation.needs_review")).toBe(true);
    // Nothing of what did not commit.
    for (const id of ids()) expect(committed.has(id), `${id} was announced but never committed`).toBe(true);
    // At least once; with one uninterrupted worker, exactly once per message.
    expect(new Set(rx.received.map((r) => r.id)).size).toBe(committed.size);
    const [{ n: pending }] = await w.db.query<{ n: number | string }>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status <> 'delivered'");
    expect(Number(pending)).toBe(0);

    // The verdicts: one event per committed operation (its only change: created divergent), none of anything else.
    const verdicts = () => otlp.events.map((e) => String(e.attributes["reconcile.operation.id"]));
    await until("every committed operation's verdict sent", () => new Set(verdicts()).size >= committed.size, 60_000);
    for (const id of verdicts()) expect(committed.has(id), `${id}'s verdict was sent but it never committed`).toBe(true);
    expect(new Set(verdicts()).size).toBe(committed.size);
    expect(otlp.events.every((e) => e.attributes["gen_ai.evaluation.score.label"] === "divergent")).toBe(true);
    const [{ n: unsent }] = await w.db.query<{ n: number | string }>("SELECT COUNT(*) AS n FROM verdict_exports WHERE status <> 'delivered'");
    expect(Number(unsent)).toBe(0);
  });
});
