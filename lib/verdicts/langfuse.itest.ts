/**
 * Verdicts to Langfuse (issue 52), end to end over real HTTP: the production server, with
 * RECONCILE_VERDICT_LANGFUSE_URL naming a receiver this test starts, sends each change of an
 * operation's effective outcome with the official `@langfuse/client` as a score on the agent's
 * tool-call observation (traceId and observationId: the span's OTel ids, as Langfuse's OTel
 * ingestion keeps them). Langfuse cannot run here, so every request is checked against Langfuse's
 * published API as `@langfuse/core` ships it (endpoint, method, Basic auth of the project's keys,
 * body as CreateScoreRequest: a changed contract fails). Tool calls come in as spans from the
 * OpenTelemetry SDK (a real agent process). On SQLite, and on PostgreSQL when
 * INTEGRATION_DATABASE_URL names one.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebhookApp, until, type WebhookApp } from "@/lib/webhooks/testing/app";
import { startLangfuseReceiver, type LangfuseReceiver } from "./testing/langfuse-receiver";
import { langfuseContractErrors } from "./testing/vendor-contract";

const KEYS = { publicKey: "pk-lf-itest", secretKey: "sk-lf-itest-secret" };
let w: WebhookApp;
let rx: LangfuseReceiver;

beforeAll(async () => {
  rx = await startLangfuseReceiver(KEYS);
  w = await startWebhookApp("verdicts-langfuse", {
    RECONCILE_VERDICT_LANGFUSE_URL: rx.url,
    RECONCILE_VERDICT_LANGFUSE_PUBLIC_KEY: KEYS.publicKey,
    RECONCILE_VERDICT_LANGFUSE_SECRET_KEY: KEYS.secretKey,
    RECONCILE_VERDICT_ALLOW_HTTP: "1",
    RECONCILE_VERDICT_ALLOW_PRIVATE: "1",
    RECONCILE_VERDICT_OTLP_TIMEOUT_MS: "2000",
  });
});
afterAll(async () => {
  await w?.app.stop();
  await rx?.close();
  await w?.db.drop();
});

const scoresOf = (id: string) => rx.scores.filter((s) => s.metadata?.operation_id === id);
const operation = async (id: string) => {
  const res = await w.api(`/api/v1/operations/${encodeURIComponent(id)}`, { token: w.tokens.read });
  expect(res.status).toBe(200);
  return res.body;
};
const log = async (q = "") => (await w.api(`/api/v1/verdict-exports?target=langfuse${q}`)).body;
type Row = { operation_id: string; status: string; attempts: number; last_error: string | null; target: string };
const agent = (tag: string) => {
  const r = spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "lib/otlp/testing/agent-run.ts", "sdk-proto", tag], {
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: `${w.app.base}/api/v1/otlp`, OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${w.tokens.ingest}` },
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as { traces: string[]; toolSpans: Record<string, string> };
};

describe("verdicts out as Langfuse scores", () => {
  it("a tool call that came as an OTLP span: each verdict is a score on its observation, by an id of the operation's, and every request keeps Langfuse's contract", async () => {
    const tag = `lf${Date.now().toString(36)}`;
    const report = agent(tag);
    const timedOut = `otel:${report.traces[0]}:${tag}-timeout`;
    const first = await until("the first score", () => scoresOf(timedOut)[0]);
    const before = await operation(timedOut);
    expect(first).toMatchObject({ traceId: report.traces[0], observationId: report.toolSpans[`${tag}-timeout`], name: "reconcile.outcome", dataType: "CATEGORICAL", value: before.effective_outcome });
    expect(first.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(first.observationId).toMatch(/^[0-9a-f]{16}$/);
    expect(first.comment).toContain(before.reason);
    expect(first.metadata).toMatchObject({ operation_id: timedOut, tool: "refund_order", project: "default" });
    expect(first.id).toMatch(/^reconcile-[0-9a-f]{32}$/);
    // Another operation of the same run has a score id of its own.
    const other = await until("another operation's score", () => rx.scores.find((s) => s.traceId === report.traces[0] && s.metadata?.operation_id !== timedOut));
    expect(other.id).not.toBe(first.id);

    // A reviewer resolves it: a second score with the same id (Langfuse updates the score), the new verdict.
    const res = await w.api(`/api/v1/operations/${encodeURIComponent(timedOut)}/corrections`, {
      token: w.tokens.review,
      body: { expected_last_correction_id: null, action: "resolve", outcome: "not_applied", reason: "the refund API has no record of it" },
    });
    expect(res.status).toBe(201);
    const second = await until("the second score", () => scoresOf(timedOut)[1]);
    expect(second).toMatchObject({ id: first.id, traceId: first.traceId, observationId: first.observationId, value: "not_applied", dataType: "CATEGORICAL" });
    expect(second.comment).toBe(`${before.reason}; a reviewer's resolve: the refund API has no record of it`);
    expect(rx.byId.get(first.id)).toMatchObject({ value: "not_applied" });

    expect(rx.requests.length).toBeGreaterThanOrEqual(2);
    expect(langfuseContractErrors(rx.requests, KEYS)).toEqual([]);
  });

  it("an operation sent without trace context is listed as not exportable to Langfuse, with the reason, and counted; nothing is sent for it", async () => {
    const id = `lf-plain-${Date.now()}`;
    const res = await w.api("/api/v1/receipts", { token: w.tokens.ingest, body: { records: [{ operation_id: id, tool: { name: "billing.charge" }, intent: { params: {} } }] } });
    expect(res.status).toBe(200);
    const row: Row = await until("its row", async () => (await log("&status=not_exportable")).items.find((i: Row) => i.operation_id === id));
    expect(row).toMatchObject({ target: "langfuse", attempts: 0 });
    expect(row.last_error).toMatch(/not exportable to Langfuse: the operation came without OpenTelemetry trace context/);
    const body = await log();
    expect(body.counts.by_target.langfuse.not_exportable).toBeGreaterThanOrEqual(1);
    expect(body.targets.find((t: { kind: string }) => t.kind === "langfuse")).toMatchObject({ enabled: true, url: rx.url, host: "127.0.0.1", keys_set: true });
    expect(JSON.stringify(body)).not.toContain(KEYS.secretKey);
    await new Promise((r) => setTimeout(r, 300));
    expect(scoresOf(id)).toEqual([]);
  });

  it("credentials refused (401, then 403): the log says so, the verdicts stay pending and are tried on the schedule (no hot loop), and are sent once accepted", async () => {
    const tag = `lf401${Date.now().toString(36)}`;
    rx.answer(401);
    agent(tag);
    const mine = async (): Promise<Row[]> => (await log()).items.filter((i: Row) => i.operation_id.includes(tag));
    const refused = (status: number) => async () => {
      const rows = await mine();
      return rows.length && rows.every((i) => i.attempts >= 2 && i.last_error?.includes(`(${status})`)) ? rows : null;
    };
    for (const row of await until("refused attempts (401)", refused(401))) {
      expect(row.status).toBe("pending");
      expect(row.last_error).toMatch(/Langfuse refused the credentials \(401\): check RECONCILE_VERDICT_LANGFUSE_PUBLIC_KEY and _SECRET_KEY; the verdicts wait in the outbox/);
    }
    rx.answer(403);
    for (const row of await until("refused attempts (403)", refused(403), 20_000)) {
      expect(row.status).toBe("pending");
      expect(row.last_error).toMatch(/Langfuse refused the credentials \(403\)/);
    }
    // The schedule, scaled by 0.001 here: 0, 5 ms, 300 ms, 1.8 s, 7.2 s… — not one attempt after another.
    await new Promise((res) => setTimeout(res, 2500));
    const rows = await mine();
    for (const row of rows) expect(row.attempts).toBeLessThanOrEqual(5);
    const sent = rx.requests.filter((q) => String((q.body as { metadata?: { operation_id?: string } } | null)?.metadata?.operation_id ?? "").includes(tag)).length;
    expect(sent).toBeLessThanOrEqual(rows.length * 5);
    rx.answer(null);
    const delivered = await until("delivered once accepted", async () => {
      const now = await mine();
      return now.every((i) => i.status === "delivered") ? now : null;
    }, 40_000);
    expect(delivered.length).toBe(rows.length);
    for (const row of delivered) expect(scoresOf(row.operation_id).length).toBeGreaterThanOrEqual(1);
    expect(langfuseContractErrors(rx.requests, KEYS)).toEqual([]);
  });

  it("the client's requests keep the outbound rules: a redirect to another host is refused, named in the log, and the verdict waits", async () => {
    const tag = `lfredir${Date.now().toString(36)}`;
    // The same receiver under another host name: a plain fetch would follow the 307 there and deliver.
    rx.redirect(`${rx.url.replace("127.0.0.1", "localhost")}/api/public/scores`);
    try {
      agent(tag);
      const mine = async (): Promise<Row[]> => (await log()).items.filter((i: Row) => i.operation_id.includes(tag));
      const rows = await until("refused by the outbound rules", async () => {
        const now = await mine();
        return now.length && now.every((i) => i.attempts >= 1 && i.last_error) ? now : null;
      });
      for (const row of rows) {
        expect(row.status).toBe("pending");
        expect(row.last_error).toMatch(/^cross_host_redirect: 127\.0\.0\.1:\d+ redirected to another host \(localhost:\d+\)/);
        expect(scoresOf(row.operation_id)).toEqual([]);
      }
    } finally {
      rx.redirect(null);
    }
  });
});
