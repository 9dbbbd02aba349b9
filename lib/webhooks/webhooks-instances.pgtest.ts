/**
 * Webhooks with two app instances on one PostgreSQL (RELIABILITY_DATABASE_URL), both running the
 * job worker: every message is delivered, and each attempt is made once — the receiver sees
 * exactly as many requests for a webhook-id as the delivery log has attempts, and one success.
 * The receiver fails every third request, so retries are claimed across the instances too.
 * The verdict export (lib/verdicts/) is held to the same with an OTLP logs receiver that fails
 * every third request: each operation's verdict taken once, and exactly as many requests as the
 * export's jobs were claimed.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { newSecret, sealSecret, secretHint } from "@/lib/domain/webhooks/signing";
import { AUTH_SECRET, divergentRecord, prepareDatabase, startApp, type App, type Tokens } from "@/lib/reliability/harness";
import { disconnect } from "@/lib/store/db/db";
import { startReceiver, type Receiver } from "./testing/receiver";
import { until, WEBHOOK_TEST_ENV } from "./testing/app";
import { resetPublicSchema } from "@/lib/testing/drop-database";
import { startLogsReceiver, type LogsReceiver } from "@/lib/verdicts/testing/otlp-logs-receiver";

const url = process.env.RELIABILITY_DATABASE_URL!;
let apps: App[] = [];
let tokens: Tokens;
let rx: Receiver;
let otlp: LogsReceiver;

beforeAll(async () => {
  await resetPublicSchema(url);
  tokens = (await prepareDatabase(url, "webhook-instances")).tokens;
  rx = await startReceiver();
  otlp = await startLogsReceiver();
  otlp.answer((n) => (n % 3 === 2 ? 503 : 200));
  rx.answers.set("/both", (n) => (n % 3 === 2 ? { status: 500 } : { status: 200 }));
  process.env.DATABASE_URL = url;
  const secret = newSecret();
  rx.secrets.set("/both", secret);
  const { createEndpoint } = await import("@/lib/store/settings/webhooks");
  await createEndpoint(
    { url: rx.url("/both"), description: "", format: "standard", enabled: true, filters: { event_types: ["operation.needs_review"], tools: [], outcomes: [], agents: [] } },
    { sealed: sealSecret(secret, AUTH_SECRET), hint: secretHint(secret) },
    "itest",
  );
  await disconnect();
  const env = { ...WEBHOOK_TEST_ENV, RECONCILE_VERDICT_OTLP_ENDPOINT: otlp.url, RECONCILE_VERDICT_ALLOW_HTTP: "1", RECONCILE_VERDICT_ALLOW_PRIVATE: "1", RECONCILE_VERDICT_OTLP_TIMEOUT_MS: "300" };
  apps = await Promise.all([startApp(url, { env }), startApp(url, { env })]);
}, 180_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await rx?.close();
  await otlp?.close();
  await disconnect();
});

it("two instances deliver every message, each attempt once", async () => {
  const ids: string[] = [];
  await Promise.all(
    Array.from({ length: 6 }, async (_, c) => {
      for (let i = 0; i < 10; i++) {
        const records = Array.from({ length: 5 }, (_, k) => divergentRecord(`inst-wh-${c}-${i}-${k}`, "inst"));
        ids.push(...records.map((r) => r.operation_id));
        const res = await fetch(`${apps[(c + i) % 2].base}/api/v1/receipts`, {
          method: "POST",
          headers: { authorization: `Bearer ${tokens.ingest}`, "content-type": "application/json" },
          body: JSON.stringify({ records }),
        });
        expect(res.status).toBe(200);
        await res.text();
      }
    }),
  );
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const delivered = async () => Number((await client.query("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'delivered'")).rows[0].n);
    await until("every message delivered", async () => (await delivered()) === ids.length, 120_000);
    await new Promise((r) => setTimeout(r, 1000));
    const attempts = new Map<string, number>(
      (await client.query("SELECT d.message_id, COUNT(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id GROUP BY d.message_id")).rows.map(
        (r: { message_id: string; n: string }) => [r.message_id, Number(r.n)],
      ),
    );
    const requests = new Map<string, number>();
    for (const r of rx.received) requests.set(r.id, (requests.get(r.id) ?? 0) + 1);
    expect(requests.size).toBe(ids.length);
    expect(rx.received.every((r) => r.verified)).toBe(true);
    expect(new Set(rx.received.map((r) => r.body.data?.operation_id))).toEqual(new Set(ids));
    // Retries happened (every third request failed), and no attempt was made twice.
    expect([...requests.values()].some((n) => n > 1)).toBe(true);
    for (const [id, n] of requests) expect(n, `requests for ${id}`).toBe(attempts.get(id));

    // The verdicts: every operation's taken once; each claim of an export job made one request.
    const sentOnce = async () => Number((await client.query("SELECT COUNT(*) AS n FROM verdict_exports WHERE status = 'delivered'")).rows[0].n);
    await until("every verdict delivered", async () => (await sentOnce()) === ids.length, 120_000);
    const taken = otlp.events.map((e) => String(e.attributes["reconcile.operation.id"]));
    expect(taken.length).toBe(ids.length);
    expect(new Set(taken)).toEqual(new Set(ids));
    expect(otlp.requests.some((r) => r.status !== 200)).toBe(true);
    const claims = Number((await client.query("SELECT SUM(attempts) AS n FROM job WHERE kind = 'verdict.export'")).rows[0].n);
    expect(otlp.requests.length).toBe(claims);
  } finally {
    await client.end();
  }
});
