/**
 * Verdicts out (issue 41), end to end over real HTTP: the production server, with
 * RECONCILE_VERDICT_OTLP_ENDPOINT naming an OTLP/HTTP logs receiver this test starts, sends each
 * change of an operation's effective outcome as a `gen_ai.evaluation.result` event with the
 * OpenTelemetry SDK's own exporter; the receiver decodes each request with OpenTelemetry's own
 * protobuf definitions. Tool calls come in as spans from the official OpenTelemetry SDK (a real
 * agent process), so the parent span id checked is the one the SDK gave the `execute_tool` span.
 * On SQLite, and on PostgreSQL when INTEGRATION_DATABASE_URL names one.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verdictTraceContext } from "@/lib/domain/verdicts/event";
import { startWebhookApp, until, type WebhookApp } from "@/lib/webhooks/testing/app";
import { startLogsReceiver, type LogsReceiver, type ReceivedEvent } from "./testing/otlp-logs-receiver";

let w: WebhookApp;
let rx: LogsReceiver;

beforeAll(async () => {
  rx = await startLogsReceiver();
  w = await startWebhookApp("verdicts", {
    RECONCILE_VERDICT_OTLP_ENDPOINT: rx.url,
    RECONCILE_VERDICT_OTLP_HEADERS: "x-team=verdicts%20itest,Authorization=Basic%20cGs6c2s=",
    RECONCILE_VERDICT_ALLOW_HTTP: "1",
    RECONCILE_VERDICT_ALLOW_PRIVATE: "1",
    // The exporter's own retries end within this; the webhook schedule (scaled) does the rest.
    RECONCILE_VERDICT_OTLP_TIMEOUT_MS: "800",
    RECONCILE_PUBLIC_URL: "https://reconcile.example",
  });
});
afterAll(async () => {
  await w?.app.stop();
  await rx?.close();
  await w?.db.drop();
});

const eventsOf = (operationId: string) => rx.events.filter((e) => e.attributes["reconcile.operation.id"] === operationId);
const nth = (operationId: string, n: number) => until(`event ${n} of ${operationId}`, () => eventsOf(operationId)[n - 1]);
const operation = async (id: string) => {
  const res = await w.api(`/api/v1/operations/${encodeURIComponent(id)}`, { token: w.tokens.read });
  expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
  return res.body;
};
const ingest = async (records: Record<string, unknown>[]) => {
  const res = await w.api("/api/v1/receipts", { token: w.tokens.ingest, body: { records } });
  expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
};
const correct = async (id: string, body: Record<string, unknown>) => {
  const res = await w.api(`/api/v1/operations/${encodeURIComponent(id)}/corrections`, { token: w.tokens.review, body: { expected_last_correction_id: null, ...body } });
  expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(201);
};

/** The event says what the operation's page says: label, value, explanation. */
function expectVerdict(e: ReceivedEvent, op: { effective_outcome: string; reason: string; tool?: { name?: string } }) {
  expect(e.eventName).toBe("gen_ai.evaluation.result");
  expect(e.attributes["event.name"]).toBe("gen_ai.evaluation.result");
  expect(e.attributes["gen_ai.evaluation.name"]).toBe("reconcile.outcome");
  expect(e.attributes["gen_ai.evaluation.score.label"]).toBe(op.effective_outcome);
  const value = op.effective_outcome === "verified" ? 1 : op.effective_outcome === "uncertain" ? undefined : 0;
  expect(e.attributes["gen_ai.evaluation.score.value"]).toBe(value);
  expect(String(e.attributes["gen_ai.evaluation.explanation"])).toContain(op.reason);
  expect(e.resource["service.name"]).toBe("reconcile");
  expect(e.headers["x-team"]).toBe("verdicts itest");
  expect(e.headers["authorization"]).toBe("Basic cGs6c2s=");
  expect(e.headers["content-type"]).toBe("application/x-protobuf");
}

describe("verdicts out as OpenTelemetry events", () => {
  it("a tool call that came as an OTLP span: each verdict is an event under its execute_tool span, a reviewer's with the reason", async () => {
    const tag = `vx${Date.now().toString(36)}`;
    const r = spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "lib/otlp/testing/agent-run.ts", "sdk-proto", tag], {
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: `${w.app.base}/api/v1/otlp`, OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${w.tokens.ingest}` },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    const report = JSON.parse(r.stdout.trim().split("\n").pop()!) as { traces: string[]; toolSpans: Record<string, string> };
    const [traceId] = report.traces;
    for (const call of [`${tag}-refund`, `${tag}-timeout`]) {
      const id = `otel:${traceId}:${call}`;
      const e = await nth(id, 1);
      expect([e.traceId, e.spanId]).toEqual([traceId, report.toolSpans[call]]);
      expectVerdict(e, await operation(id));
      expect(e.attributes["gen_ai.tool.name"]).toBe("refund_order");
      expect(e.attributes["reconcile.link"]).toBe(`https://reconcile.example/p/default/operations/${encodeURIComponent(id)}`);
      expect(e.attributes["reconcile.project"]).toBe("default");
    }

    // A reviewer resolves the timed-out call: a second event, the same span, the reviewer's reason.
    const timedOut = `otel:${traceId}:${tag}-timeout`;
    const before = await operation(timedOut);
    expect(["uncertain", "divergent"]).toContain(before.effective_outcome);
    await correct(timedOut, { action: "resolve", outcome: "not_applied", reason: "the refund API has no record of it" });
    const second = await nth(timedOut, 2);
    expect([second.traceId, second.spanId]).toEqual([traceId, report.toolSpans[`${tag}-timeout`]]);
    expect(second.attributes["gen_ai.evaluation.score.label"]).toBe("not_applied");
    expect(second.attributes["gen_ai.evaluation.score.value"]).toBe(0);
    expect(second.attributes["gen_ai.evaluation.explanation"]).toBe(`${before.reason}; a reviewer's resolve: the refund API has no record of it`);
    // Nothing more: the verdict changed twice.
    await new Promise((res) => setTimeout(res, 300));
    expect(eventsOf(timedOut)).toHaveLength(2);
  });

  it("an operation without a trace: a trace of its own, the same for each of its verdicts; its idempotency key is never sent", async () => {
    const id = `vx-plain-${Date.now()}`;
    const key = `idem-secret-${Date.now()}`;
    await ingest([{ operation_id: id, tool: { name: "billing.charge" }, idempotency: { enforced: true, key }, intent: { params: { amount: 5 } } }]);
    const first = await nth(id, 1);
    const own = verdictTraceContext(id, {});
    expect([first.traceId, first.spanId]).toEqual([own.trace_id, own.span_id]);
    expectVerdict(first, await operation(id));
    expect(first.attributes["gen_ai.evaluation.score.label"]).toBe("uncertain");

    // The receipt comes: rejected.
    await ingest([{ operation_id: id, receipt: { status: "rejected", receipt_id: `r-${id}`, observed_at: new Date().toISOString() } }]);
    const second = await nth(id, 2);
    expect([second.traceId, second.spanId]).toEqual([own.trace_id, own.span_id]);
    expectVerdict(second, await operation(id));
    expect(second.attributes["gen_ai.evaluation.score.label"]).toBe("rejected");
    for (const req of rx.requests) expect(req.bytes.includes(Buffer.from(key))).toBe(false);
  });

  it("a receiver that is down: the events wait, are tried again on the schedule and delivered once it answers; the delivery log shows each step", async () => {
    rx.answer(503);
    const id = `vx-down-${Date.now()}`;
    await ingest([{ operation_id: id, tool: { name: "billing.refund" }, intent: { params: {} }, receipt: { status: "rejected", receipt_id: `r-${id}`, observed_at: new Date().toISOString() } }]);
    const log = async (status?: string) => (await w.api(`/api/v1/verdict-exports${status ? `?status=${status}` : ""}`)).body;
    const failing = await until("two failed attempts", async () => (await log("pending")).items.find((i: { operation_id: string; attempts: number }) => i.operation_id === id && i.attempts >= 2));
    expect(failing.last_error).toMatch(/retryable/);
    expect(eventsOf(id)).toHaveLength(0);
    rx.answer(200);
    const e = await until("the event, once the receiver answers", () => eventsOf(id)[0], 30_000);
    expectVerdict(e, await operation(id));
    const body = await log();
    const row = body.items.find((i: { operation_id: string }) => i.operation_id === id);
    expect(row).toMatchObject({ status: "delivered", outcome: "rejected", parented: false, last_error: null });
    expect(row.attempts).toBeGreaterThanOrEqual(3);
    expect(body.target).toEqual({ enabled: true, url: `${rx.url}/v1/logs`, host: "127.0.0.1", header_names: ["x-team", "Authorization"], allow_http: true, allow_private: true });
    expect(JSON.stringify(body)).not.toContain("cGs6c2s");
    expect(body.counts.delivered).toBeGreaterThanOrEqual(4);
    expect(body.counts.failed).toBe(0);
  });

  it("a project's own admin sees the instance's verdict endpoint by its host only, never its whole URL (issue 47)", async () => {
    const projects = await import("@/lib/store/people/projects");
    const { prepareProject } = await import("@/lib/cli/projects");
    const p = await projects.createProject({ slug: `vx-b-${Date.now()}`, name: "Verdicts B", actor: "itest" });
    await prepareProject(p.id);
    const email = `vx-b-admin-${Date.now()}@itest.example`;
    await (await import("@/lib/store/people/users")).createUser({ email, password: "itest-password-1", role: "admin", project: p.id, actor: "itest", via: "cli" });
    const { token } = await (await import("@/lib/store/people/api-tokens")).createApiToken({ email, name: "b", scopes: ["read", "admin"], project: p.id, actor: "itest" });
    const res = await w.api("/api/v1/verdict-exports", { token });
    expect(res.status).toBe(200);
    expect(res.body.target).toEqual({ enabled: true, url: null, host: "127.0.0.1", header_names: ["x-team", "Authorization"], allow_http: true, allow_private: true });
    expect(JSON.stringify(res.body)).not.toContain(rx.url);
    expect(JSON.stringify(res.body)).not.toContain("/v1/logs");
  });

  it("the delivery log is for admins, and refuses a query it does not know in a sentence", async () => {
    expect((await w.api("/api/v1/verdict-exports", { token: w.tokens.read })).status).toBe(403);
    const bad = await w.api("/api/v1/verdict-exports?status=lost&limit=0");
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/status/);
  });
});
