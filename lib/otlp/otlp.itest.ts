import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { baseUrl, call, chainCount, principal, unique } from "@/lib/testing/integration";
import { encodeJsonRequest } from "./decode";

/**
 * OTLP/HTTP traces in, against the real server: the official OpenTelemetry JS exporters and the
 * Vercel AI SDK in their own processes (configured only by OTEL_EXPORTER_OTLP_*), and recorded
 * OTLP JSON of the four span conventions posted as JSON, protobuf and gzip.
 */
const TRACES = "/api/v1/otlp/v1/traces";
let ingestToken: string;
let verifyToken: string;

beforeAll(async () => {
  ingestToken = (await principal("reviewer", ["ingest", "read"])).token;
  verifyToken = (await principal("reviewer", ["ingest", "verify", "read"])).token;
});

function runAgent(mode: string, tag: string, env: Record<string, string>): string[] {
  const r = spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "lib/otlp/testing/agent-run.ts", mode, tag], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  const report = JSON.parse(r.stdout.trim().split("\n").pop()!);
  // Every export the SDK made was answered with success (ExportResultCode.SUCCESS = 0).
  expect(report.exports.length).toBeGreaterThan(0);
  expect(report.exports).toEqual(report.exports.map(() => ({ code: 0 })));
  return report.traces;
}

const operation = async (id: string) => {
  const res = await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token: ingestToken });
  expect(res.status, `${id}: ${res.text.slice(0, 300)}`).toBe(200);
  return res.body;
};
const stagesOf = (op: any) => op.stages.map((s: any) => s.stage);

describe("the official OpenTelemetry JS SDK exporters", () => {
  it.each([
    ["sdk-proto", { OTEL_EXPORTER_OTLP_ENDPOINT: `${baseUrl}/api/v1/otlp` }],
    ["sdk-json", { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${baseUrl}${TRACES}` }],
  ])("%s: GenAI tool spans become operations; a timeout leaves no receipt", async (mode, endpoint) => {
    const tag = unique(mode);
    const before = await chainCount();
    const [traceId] = runAgent(mode, tag, { ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${ingestToken}` });
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    const refund = await operation(`otel:${traceId}:${tag}-refund`);
    expect(stagesOf(refund)).toEqual(["intent", "receipt"]);
    expect(refund.tool).toEqual({ name: "refund_order", type: "function" });
    expect(refund.trajectory_id).toBe(`conv-${tag}`);
    expect(refund.agent).toEqual({ name: `support-${tag}` });
    expect(refund.stages[0].payload.params).toEqual({ order: "5531", amount_cents: 4200 });
    expect(refund.stages[1].payload).toMatchObject({ status: "accepted", raw: { refund_id: `rf-${tag}`, status: "issued" } });
    expect(refund.stages[0].sent_by.token_name).toBe("itest");
    expect(refund.otel).toMatchObject({ trace_id: traceId, convention: "gen_ai", span_name: "execute_tool refund_order" });
    expect(refund.otel.attributes["gen_ai.tool.call.id"]).toBe(`${tag}-refund`);

    const timedOut = await operation(`otel:${traceId}:${tag}-timeout`);
    expect(stagesOf(timedOut)).toEqual(["intent"]);
    expect(timedOut.outcome).toBe("uncertain");
    // Two tool spans, two records (intent+receipt: 2 stage records; intent: 1); the agent and chat spans store nothing.
    expect((await chainCount()) - before).toBe(3);
  });
});

describe("a Vercel AI SDK generateText run with tools and telemetry", () => {
  it.each([
    ["ai-sdk", "gen_ai"],
    ["ai-sdk-legacy", "vercel_ai"],
  ])("%s: each tool call is an operation of the trajectory; a result reporting failure is rejected", async (mode, convention) => {
    const tag = unique(mode);
    const [traceId] = runAgent(mode, tag, { OTEL_EXPORTER_OTLP_ENDPOINT: `${baseUrl}/api/v1/otlp`, OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${ingestToken}` });
    const ok = await operation(`otel:${traceId}:${tag}-post-1`);
    const failed = await operation(`otel:${traceId}:${tag}-post-2`);
    for (const op of [ok, failed]) {
      expect(op.tool.name).toBe("publishPost");
      expect(op.trajectory_id).toBe(traceId);
      expect(op.otel.convention).toBe(convention);
    }
    expect(ok.agent).toEqual({ name: convention === "gen_ai" ? `publisher-${tag}` : `otlp-itest-${tag}` });
    expect(ok.stages[0].payload.params).toEqual({ text: "We shipped receipts" });
    expect(ok.stages[1].payload).toMatchObject({ status: "accepted", raw: { accepted: true, post_id: `p-${tag}` } });
    expect(failed.outcome).toBe("rejected");

    const trajectory = await call(`/api/v1/operations?trajectory_id=${traceId}`, { token: ingestToken });
    expect(trajectory.status).toBe(200);
    expect(trajectory.body.items.map((o: any) => o.operation_id).sort()).toEqual([`otel:${traceId}:${tag}-post-1`, `otel:${traceId}:${tag}-post-2`]);
  });
});

/** A fixture with fresh trace ids (so each test's operations are its own). */
function fixture(name: string): any {
  const text = readFileSync(path.join(import.meta.dirname, "fixtures", `${name}.json`), "utf8");
  const ids = new Map<string, string>();
  return JSON.parse(text.replace(/\b[0-9a-f]{32}\b/g, (t) => ids.get(t) ?? (ids.set(t, crypto.randomUUID().replace(/-/g, "")), ids.get(t)!)).replace(/email-refund-5531/g, unique("email")));
}
const traceOf = (f: any) => f.resourceSpans[0].scopeSpans[0].spans[0].traceId as string;

const post = (body: Uint8Array | string, headers: Record<string, string>, token = ingestToken) =>
  fetch(baseUrl + TRACES, { method: "POST", headers: { authorization: `Bearer ${token}`, ...headers }, body: body as BodyInit });

describe("recorded spans of the four conventions", () => {
  it("JSON: the answer is an empty ExportTraceServiceResponse; outcomes follow the spans", async () => {
    const f = fixture("gen-ai");
    const res = await post(JSON.stringify(f), { "content-type": "application/json" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({});
    const t = traceOf(f);
    expect((await operation(`otel:${t}:call_refund_1`)).outcome).toBe("uncertain");
    expect(stagesOf(await operation(`otel:${t}:call_refund_2`))).toEqual(["intent"]);
    expect((await operation(`otel:${t}:call_lookup_1`)).outcome).toBe("rejected");
  });

  it("protobuf, gzipped: the answer is protobuf; a result reporting failure on an OK span is rejected; sending again stores nothing", async () => {
    const f = fixture("vercel-ai");
    const body = gzipSync(encodeJsonRequest(f));
    const headers = { "content-type": "application/x-protobuf", "content-encoding": "gzip" };
    const res = await post(body, headers);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-protobuf");
    expect((await res.arrayBuffer()).byteLength).toBe(0); // every span taken: an empty message
    const t = traceOf(f);
    expect((await operation(`otel:${t}:call_x_post_002`)).outcome).toBe("rejected");
    const before = await chainCount();
    expect((await post(body, headers)).status).toBe(200);
    expect(await chainCount()).toBe(before);
  });

  it("OpenInference: isError results are rejected; plain text kept", async () => {
    const f = fixture("openinference");
    expect((await post(JSON.stringify(f), { "content-type": "application/json" })).status).toBe(200);
    const t = traceOf(f);
    expect((await operation(`otel:${t}:00f067aa0ba902b8`)).outcome).toBe("rejected");
    expect((await operation(`otel:${t}:00f067aa0ba902b9`)).stages[1].payload.raw).toBe("sunny, 21 °C");
  });

  it("OpenLLMetry with reconcile.* attributes: the canonical read needs the verify scope (partial success), and with it decides", async () => {
    const f = fixture("traceloop");
    const spans = f.resourceSpans[0].scopeSpans[0].spans;
    const opId = spans[1].attributes.find((a: any) => a.key === "reconcile.operation_id").value.stringValue;
    const res = await post(JSON.stringify(f), { "content-type": "application/json" });
    expect(res.status).toBe(200);
    const answer = await res.json();
    expect(answer.partialSuccess.rejectedSpans).toBe("1");
    expect(answer.partialSuccess.errorMessage).toMatch(/verify_scope_required/);
    const op = await operation(opId);
    expect(op.idempotency).toEqual({ key: "email-5531", enforced: true });
    expect(op.claimed_outcome).toBe("success");
    expect(stagesOf(op)).toEqual(["intent", "receipt"]);

    // A verifier (another user, with the verify scope) sends the read span alone: it decides.
    const readOnly = { resourceSpans: [{ ...f.resourceSpans[0], scopeSpans: [{ ...f.resourceSpans[0].scopeSpans[0], spans: [spans[3]] }] }] };
    const again = await post(JSON.stringify(readOnly), { "content-type": "application/json" }, verifyToken);
    expect(await again.json()).toEqual({});
    const verified = await operation(opId);
    expect(verified.outcome).toBe("verified");
    expect(stagesOf(verified)).toEqual(["intent", "receipt", "canonical_read"]);
  });
});

describe("trust rules hold through spans", () => {
  it("a verify-only token's tool span is refused (forbidden); another user's operation named by reconcile.operation_id is refused (not_operation_owner)", async () => {
    const verifyOnly = (await principal("reviewer", ["verify"])).token;
    const f = fixture("vercel-ai");
    const first = await (await post(JSON.stringify(f), { "content-type": "application/json" }, verifyOnly)).json();
    expect(first.partialSuccess.rejectedSpans).toBe("2");
    expect(first.partialSuccess.errorMessage).toMatch(/forbidden/);

    const mine = unique("op-otlp-owned");
    expect((await call("/api/v1/receipts", { token: ingestToken, body: { operation_id: mine, intent: { effect: "mine" } } })).status).toBe(201);
    const intruder = (await principal("reviewer", ["ingest"])).token;
    const g = fixture("traceloop");
    const spans = g.resourceSpans[0].scopeSpans[0].spans;
    spans[1].attributes.find((a: any) => a.key === "reconcile.operation_id").value.stringValue = mine;
    g.resourceSpans[0].scopeSpans[0].spans = [spans[0], spans[1]];
    const second = await (await post(JSON.stringify(g), { "content-type": "application/json" }, intruder)).json();
    expect(second.partialSuccess.rejectedSpans).toBe("1");
    expect(second.partialSuccess.errorMessage).toMatch(/not_operation_owner/);
    expect(stagesOf(await operation(mine))).toEqual(["intent"]);
  });
});

describe("size", () => {
  it("a request of 12 MiB (past the 10 MB a Next.js proxy would pass on) is read whole", async () => {
    const f = fixture("openinference");
    const spans = f.resourceSpans[0].scopeSpans[0].spans;
    // The chain span (ignored) carries 12 MiB of input; the tool spans beside it are stored.
    spans[0].attributes.push({ key: "input.value", value: { stringValue: "z".repeat(12 * 1024 * 1024) } });
    const body = gzipSync(encodeJsonRequest(f));
    const res = await fetch(baseUrl + TRACES, { method: "POST", headers: { authorization: `Bearer ${ingestToken}`, "content-type": "application/x-protobuf" }, body: encodeJsonRequest(f) as BodyInit });
    expect(res.status).toBe(200);
    expect(body.length).toBeLessThan(12 * 1024 * 1024); // and gzipped it is small: inflated within the limit too
    expect((await post(body, { "content-type": "application/x-protobuf", "content-encoding": "gzip" })).status).toBe(200);
    expect((await operation(`otel:${traceOf(f)}:00f067aa0ba902b8`)).outcome).toBe("rejected");
  });
});

describe("refusals", () => {
  const json = { "content-type": "application/json" };
  it.each([
    ["malformed protobuf", 400, () => post(Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 1]), { "content-type": "application/x-protobuf" })],
    ["not JSON", 400, () => post("{", json)],
    ["a trace id of the wrong length", 400, () => post(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: "ab", spanId: "0102030405060708", name: "x" }] }] }] }), json)],
    ["not gzip", 400, () => post("plain", { ...json, "content-encoding": "gzip" })],
    ["another encoding", 415, () => post("x", { ...json, "content-encoding": "br" })],
    ["another content type", 415, () => post("x", { "content-type": "text/plain" })],
    ["over 16 MiB", 413, () => post(new Uint8Array(16 * 1024 * 1024 + 1), { "content-type": "application/x-protobuf" })],
    ["a gzip bomb (over 16 MiB inflated)", 413, () => post(gzipSync(Buffer.alloc(17 * 1024 * 1024, 32)), { ...json, "content-encoding": "gzip" })],
    ["1.2 million attribute values (2.4 MiB of protobuf, gzipped to a few KB)", 413, () => {
      const f = fixture("vercel-ai");
      f.resourceSpans[0].scopeSpans[0].spans[1].attributes.push({ key: "many", value: { arrayValue: { values: Array.from({ length: 1_200_000 }, () => ({})) } } });
      return post(gzipSync(encodeJsonRequest(f)), { "content-type": "application/x-protobuf", "content-encoding": "gzip" });
    }],
    ["no token", 401, () => fetch(baseUrl + TRACES, { method: "POST", headers: json, body: "{}" })],
  ])("%s → %i, nothing stored", async (_name, status, send) => {
    const before = await chainCount();
    const res = await send();
    expect(res.status).toBe(status);
    expect(await chainCount()).toBe(before);
  });

  it.each(["/api/v1/otlp/%FF/traces", "/api/v1/otlp/v1/traces%FF", "/api/v1/receipts/%zz", "/operations/%FF"])("a path that is not valid percent-encoding, %s → 400 (these skip the proxy: it was a bare 500)", async (p) => {
    const res = await fetch(baseUrl + p, { method: "POST", headers: { authorization: `Bearer ${ingestToken}`, "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(400);
    const text = await res.text();
    if (p.startsWith("/api/")) expect(JSON.parse(text).error.code).toBe("invalid_request");
    else expect(text).toMatch(/not valid percent-encoded/);
  });

  it("a token without the ingest scope → 403", async () => {
    const reader = (await principal("viewer", ["read"])).token;
    expect((await post("{}", json, reader)).status).toBe(403);
  });

  it("a request with no tool spans is taken and stores nothing", async () => {
    const before = await chainCount();
    const res = await post(JSON.stringify({ resourceSpans: [] }), json);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(await chainCount()).toBe(before);
  });
});
