/**
 * Verdicts to Phoenix (issue 52), end to end over real HTTP: the production server, with
 * RECONCILE_VERDICT_PHOENIX_URL naming a receiver this test starts, sends each change of an
 * operation's effective outcome with the official `@arizeai/phoenix-client` as a span annotation
 * on the agent's tool span. Phoenix cannot run here, so every request is checked against Phoenix's
 * published API description as its client package ships it (path, method, query, body: a changed
 * contract fails), and its Bearer key. Tool calls come in as spans from the OpenTelemetry SDK (a
 * real agent process). On SQLite, and on PostgreSQL when INTEGRATION_DATABASE_URL names one.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebhookApp, until, type WebhookApp } from "@/lib/webhooks/testing/app";
import { startPhoenixReceiver, type PhoenixReceiver } from "./testing/phoenix-receiver";
import { phoenixContractErrors } from "./testing/vendor-contract";

const KEY = "px-itest-key";
let w: WebhookApp;
let rx: PhoenixReceiver;

beforeAll(async () => {
  rx = await startPhoenixReceiver(KEY);
  w = await startWebhookApp("verdicts-phoenix", {
    RECONCILE_VERDICT_PHOENIX_URL: rx.url,
    RECONCILE_VERDICT_PHOENIX_API_KEY: KEY,
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

const annotationsOf = (id: string) => rx.annotations.filter((a) => a.identifier === id);
const operation = async (id: string) => {
  const res = await w.api(`/api/v1/operations/${encodeURIComponent(id)}`, { token: w.tokens.read });
  expect(res.status).toBe(200);
  return res.body;
};
const log = async (q = "") => (await w.api(`/api/v1/verdict-exports?target=phoenix${q}`)).body;
type Row = { operation_id: string; status: string; attempts: number; last_error: string | null; target: string };

describe("verdicts out as Phoenix span annotations", () => {
  it("a tool call that came as an OTLP span: each verdict annotates its execute_tool span, by the operation's id, and every request keeps Phoenix's contract", async () => {
    const tag = `px${Date.now().toString(36)}`;
    const r = spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "lib/otlp/testing/agent-run.ts", "sdk-proto", tag], {
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: `${w.app.base}/api/v1/otlp`, OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${w.tokens.ingest}` },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    const report = JSON.parse(r.stdout.trim().split("\n").pop()!) as { traces: string[]; toolSpans: Record<string, string> };
    const timedOut = `otel:${report.traces[0]}:${tag}-timeout`;
    const first = await until("the first annotation", () => annotationsOf(timedOut)[0]);
    const before = await operation(timedOut);
    expect(first).toMatchObject({ span_id: report.toolSpans[`${tag}-timeout`], name: "reconcile.outcome", annotator_kind: "CODE", identifier: timedOut });
    expect(first.result.label).toBe(before.effective_outcome);
    expect(first.result.explanation).toContain(before.reason);
    expect(first.metadata).toMatchObject({ operation_id: timedOut, tool: "refund_order", project: "default" });

    // A reviewer resolves it: the same span and identifier (Phoenix replaces the annotation), the new verdict.
    const res = await w.api(`/api/v1/operations/${encodeURIComponent(timedOut)}/corrections`, {
      token: w.tokens.review,
      body: { expected_last_correction_id: null, action: "resolve", outcome: "not_applied", reason: "the refund API has no record of it" },
    });
    expect(res.status).toBe(201);
    const second = await until("the second annotation", () => annotationsOf(timedOut)[1]);
    expect(second).toMatchObject({ span_id: first.span_id, identifier: timedOut, result: { label: "not_applied", score: 0 } });
    expect(second.result.explanation).toBe(`${before.reason}; a reviewer's resolve: the refund API has no record of it`);

    for (const req of rx.requests) {
      expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(req.headers["content-type"]).toMatch(/^application\/json/);
    }
    expect(rx.requests.length).toBeGreaterThanOrEqual(2);
    expect(phoenixContractErrors(rx.requests)).toEqual([]);
  });

  it("an operation sent without trace context is listed as not exportable to Phoenix, with the reason, and counted; nothing is sent for it", async () => {
    const id = `px-plain-${Date.now()}`;
    const res = await w.api("/api/v1/receipts", { token: w.tokens.ingest, body: { records: [{ operation_id: id, tool: { name: "billing.charge" }, intent: { params: {} } }] } });
    expect(res.status).toBe(200);
    const row: Row = await until("its row", async () => (await log("&status=not_exportable")).items.find((i: Row) => i.operation_id === id));
    expect(row).toMatchObject({ target: "phoenix", attempts: 0 });
    expect(row.last_error).toMatch(/not exportable to Phoenix: the operation came without OpenTelemetry trace context/);
    const body = await log();
    expect(body.counts.by_target.phoenix.not_exportable).toBeGreaterThanOrEqual(1);
    expect(body.targets.find((t: { kind: string }) => t.kind === "phoenix")).toMatchObject({ enabled: true, url: rx.url, host: "127.0.0.1", api_key_set: true });
    expect(JSON.stringify(body)).not.toContain(KEY);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.annotations.some((a) => a.metadata?.operation_id === id)).toBe(false);
  });

  it("credentials refused (401): the log says so, the verdicts stay pending and are tried on the schedule (no hot loop), and are sent once the key works", async () => {
    const tag = `px401${Date.now().toString(36)}`;
    rx.answer(401);
    const r = spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "lib/otlp/testing/agent-run.ts", "sdk-proto", tag], {
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: `${w.app.base}/api/v1/otlp`, OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${w.tokens.ingest}` },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const mine = async (): Promise<Row[]> => (await log()).items.filter((i: Row) => i.operation_id.includes(tag));
    const refused: Row[] = await until("refused attempts", async () => {
      const rows = await mine();
      return rows.length && rows.every((i) => i.attempts >= 2) ? rows : null;
    });
    for (const row of refused) {
      expect(row.status).toBe("pending");
      expect(row.last_error).toMatch(/Phoenix refused the credentials \(401\): check RECONCILE_VERDICT_PHOENIX_API_KEY/);
    }
    // The schedule, scaled by 0.001 here: 0, 5 ms, 300 ms, 1.8 s, 7.2 s… — not one attempt after another.
    await new Promise((res) => setTimeout(res, 2500));
    for (const row of await mine()) expect(row.attempts).toBeLessThanOrEqual(5);
    rx.answer(null);
    const delivered = await until("delivered once the key is taken", async () => {
      const rows = await mine();
      return rows.every((i) => i.status === "delivered") ? rows : null;
    }, 40_000);
    for (const row of delivered) expect(annotationsOf(row.operation_id).length).toBeGreaterThanOrEqual(1);
    expect(phoenixContractErrors(rx.requests.filter((q) => q.status === 200))).toEqual([]);
  });
});
