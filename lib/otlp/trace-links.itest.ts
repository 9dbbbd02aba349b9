import { spawnSync } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { getTrajectory } from "@/lib/store/queries/get-trajectory";
import { baseUrl, call, db, principal, unique } from "@/lib/testing/integration";
import { runCliSync } from "@/lib/testing/cli";

/**
 * OTLP across requests (issue 39): the official OpenTelemetry SDK's SimpleSpanProcessor exports
 * each span as it ends, so tool spans reach the server before their invoke_agent ancestor. The
 * records stay as sent (the trace id as trajectory); the projection links them to the
 * conversation and agent once the ancestor arrives, in either order, through lists, filters,
 * search, the trajectory page's query, the operation read and a projection rebuild.
 */
const TRACES = "/api/v1/otlp/v1/traces";
let token: string;

beforeAll(async () => {
  token = (await principal("reviewer", ["ingest", "read"])).token;
});

function runAgent(mode: string, tag: string): { traceId: string; exported: string[][] } {
  const r = spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "lib/otlp/testing/agent-run.ts", mode, tag], {
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: `${baseUrl}/api/v1/otlp`, OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${token}` },
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  const report = JSON.parse(r.stdout.trim().split("\n").pop()!);
  expect(report.exports).toEqual(report.exports.map(() => ({ code: 0 })));
  expect(report.traces).toHaveLength(1);
  return { traceId: report.traces[0], exported: report.exported };
}

const operation = async (id: string) => {
  const res = await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token });
  expect(res.status, `${id}: ${res.text.slice(0, 300)}`).toBe(200);
  return res.body;
};
const listed = async (query: string): Promise<string[]> => {
  const res = await call(`/api/v1/operations?${query}`, { token });
  expect(res.status, res.text.slice(0, 300)).toBe(200);
  return res.body.items.map((i: { operation_id: string }) => i.operation_id).sort();
};

/** Posts OTLP JSON spans (one resource, one scope) and returns the answer's body. */
async function post(spans: Record<string, unknown>[], as = token) {
  const res = await fetch(`${baseUrl}${TRACES}`, {
    method: "POST",
    headers: { authorization: `Bearer ${as}`, "content-type": "application/json" },
    body: JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: "service.name", value: { stringValue: "svc" } }] }, scopeSpans: [{ spans }] }] }),
  });
  expect(res.status).toBe(200);
  return res.json();
}
const hex = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => b.toString(16).padStart(2, "0")).join("");
const attrs = (a: Record<string, string>) => Object.entries(a).map(([key, v]) => ({ key, value: { stringValue: v } }));
const now = () => String(BigInt(Date.now() - 60_000) * 1_000_000n);
const tool = (traceId: string, callId: string, parentSpanId: string) => ({
  traceId,
  spanId: hex(8),
  parentSpanId,
  name: "execute_tool lookup",
  startTimeUnixNano: now(),
  endTimeUnixNano: now(),
  attributes: attrs({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": callId }),
});
const agent = (traceId: string, spanId: string, name: string, conversation: string) => ({
  traceId,
  spanId,
  name: `invoke_agent ${name}`,
  startTimeUnixNano: now(),
  endTimeUnixNano: now(),
  attributes: attrs({ "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, "gen_ai.conversation.id": conversation }),
});

describe("SimpleSpanProcessor: a conversation groups its tool calls whichever order the spans came in", () => {
  it("tool spans exported before their invoke_agent ancestor are linked when it arrives; the records stay as sent; a rebuild agrees", async () => {
    const tag = unique("tf");
    const { traceId, exported } = runAgent("simple-tool-first", tag);
    // Each span its own export, the tool calls first.
    expect(exported).toEqual([["execute_tool lookup_order"], ["execute_tool refund_order"], ["invoke_agent support-" + tag]]);
    const ids = [`otel:${traceId}:${tag}-lookup`, `otel:${traceId}:${tag}-refund`].sort();

    for (const id of ids) {
      const op = await operation(id);
      expect(op.trajectory_id).toBe(`conv-${tag}`);
      expect(op.agent).toEqual({ name: `support-${tag}` });
      // The record is what its request said: no conversation, the resource's service as the agent.
      expect(op.stages[0].envelope).toMatchObject({ trajectory_id: traceId, agent: { name: `otlp-itest-${tag}` } });
    }
    expect(await listed(`trajectory_id=conv-${tag}`)).toEqual(ids);
    expect(await listed(`trajectory_id=${traceId}`)).toEqual([]);
    expect(await listed(`agent=support-${tag}`)).toEqual(ids);
    expect(await listed(`q=${encodeURIComponent(`support-${tag}`)}`)).toEqual(ids);
    expect((await getTrajectory(`conv-${tag}`))?.steps.map((s) => s.operation_id).sort()).toEqual(ids);

    const client = await db();
    const snapshot = () => client.operationView.findMany({ where: { operationId: { in: ids } }, orderBy: { operationId: "asc" } });
    const before = await snapshot();
    expect(before.map((v) => [v.trajectoryId, v.agent])).toEqual(ids.map(() => [`conv-${tag}`, `support-${tag}`]));
    const r = runCliSync(["projections:rebuild"]);
    expect(r.status, r.stderr).toBe(0);
    expect(await snapshot()).toEqual(before);
    expect(await listed(`q=${encodeURIComponent(`support-${tag}`)}`)).toEqual(ids);
  });

  it("the reverse order: a tool span that arrives after its ancestor takes the conversation as it is stored", async () => {
    const tag = unique("af");
    const { traceId, exported } = runAgent("simple-agent-first", tag);
    expect(exported).toEqual([["invoke_agent support-" + tag], ["execute_tool refund_order"]]);
    const op = await operation(`otel:${traceId}:${tag}-late`);
    expect(op.trajectory_id).toBe(`conv-${tag}`);
    expect(op.agent).toEqual({ name: `support-${tag}` });
    expect(op.stages[0].envelope.trajectory_id).toBe(traceId);
    expect(await listed(`trajectory_id=conv-${tag}`)).toEqual([`otel:${traceId}:${tag}-late`]);
  });

  it("a trace whose spans name two conversations keeps the first to arrive (and its agent)", async () => {
    const tag = unique("ch");
    const { traceId } = runAgent("simple-changed", tag);
    const op = await operation(`otel:${traceId}:${tag}-refund`);
    expect(op.trajectory_id).toBe(`conv-${tag}-first`);
    expect(op.agent).toEqual({ name: `support-${tag}` });
    expect(await listed(`trajectory_id=conv-${tag}-second`)).toEqual([]);
  });
});

describe("trace links: hostile shapes", () => {
  it("another user's spans naming the same trace link nothing of this user's operations", async () => {
    const other = (await principal("reviewer", ["ingest", "read"])).token;
    const traceId = hex(16);
    const root = hex(8);
    const tag = unique("own");
    expect(await post([tool(traceId, `${tag}-a`, root)])).toEqual({});
    expect(await post([agent(traceId, root, "mallory", `conv-${tag}-mallory`)], other)).toEqual({});
    const op = await operation(`otel:${traceId}:${tag}-a`);
    expect(op.trajectory_id).toBe(traceId);
    expect(op.agent).toEqual({ name: "svc" });
    // The owner's own ancestor still links it.
    expect(await post([agent(traceId, root, "owner", `conv-${tag}`)])).toEqual({});
    expect((await operation(`otel:${traceId}:${tag}-a`)).trajectory_id).toBe(`conv-${tag}`);
  });

  it("a conversation named first and the agent later: the agent reaches the operations already linked to the conversation", async () => {
    const traceId = hex(16);
    const root = hex(8);
    const tag = unique("late-agent");
    expect(await post([tool(traceId, `${tag}-a`, root)])).toEqual({});
    const onlyConversation = { ...agent(traceId, hex(8), "x", `conv-${tag}`), attributes: attrs({ "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": `conv-${tag}` }) };
    expect(await post([onlyConversation])).toEqual({});
    let op = await operation(`otel:${traceId}:${tag}-a`);
    expect([op.trajectory_id, op.agent]).toEqual([`conv-${tag}`, { name: "svc" }]);
    expect(await post([agent(traceId, root, `support-${tag}`, `conv-${tag}`)])).toEqual({});
    op = await operation(`otel:${traceId}:${tag}-a`);
    expect([op.trajectory_id, op.agent]).toEqual([`conv-${tag}`, { name: `support-${tag}` }]);
    // The views say so too (lists and filters), as a rebuild would.
    expect(await listed(`agent=support-${tag}`)).toEqual([`otel:${traceId}:${tag}-a`]);
  });

  it("a token that may only verify sets no link: trajectory and agent are envelope fields, which need the ingest scope", async () => {
    const owner = await principal("reviewer", ["ingest", "read"]);
    const { createApiToken } = await import("@/lib/store/people/api-tokens");
    const verifyOnly = (await createApiToken({ email: owner.email, name: "verify only", scopes: ["verify"], actor: "itest" })).token;
    const traceId = hex(16);
    const root = hex(8);
    const tag = unique("verify-only");
    expect(await post([tool(traceId, `${tag}-a`, root)], owner.token)).toEqual({});
    expect(await post([agent(traceId, root, "mallory", `conv-${tag}`)], verifyOnly)).toEqual({});
    const op = (await call(`/api/v1/operations/${encodeURIComponent(`otel:${traceId}:${tag}-a`)}`, { token: owner.token })).body;
    expect([op.trajectory_id, op.agent]).toEqual([traceId, { name: "svc" }]);
    expect(await (await db()).otelTraceLink.count({ where: { traceId } })).toBe(0);
  });

  it("many traces: 300 tool spans in 300 traces, then their 300 ancestors in one request, all linked", async () => {
    const tag = unique("many");
    const traces = Array.from({ length: 300 }, () => ({ traceId: hex(16), root: hex(8) }));
    expect(await post(traces.map((t, i) => tool(t.traceId, `${tag}-${i}`, t.root)))).toEqual({});
    expect(await post(traces.map((t) => agent(t.traceId, t.root, `agent-${tag}`, `conv-${tag}-${t.traceId.slice(0, 8)}`)))).toEqual({});
    const items: { operation_id: string; trajectory_id: string }[] = [];
    for (let cursor = ""; ; ) {
      const res = await call(`/api/v1/operations?agent=agent-${tag}&limit=200${cursor}`, { token });
      items.push(...res.body.items);
      if (!res.body.next_cursor) break;
      cursor = `&cursor=${res.body.next_cursor}`;
    }
    expect(items).toHaveLength(300);
    for (const item of items) expect(item.trajectory_id).toBe(`conv-${tag}-${item.operation_id.slice(5, 13)}`);
  });

  it("past 10,000 traces named in one request, the rest are not kept, said as a warning; the spans are not counted as rejected", async () => {
    const tag = unique("cap");
    const spans = Array.from({ length: 10_002 }, () => ({ ...agent(hex(16), hex(8), "a", `c-${tag}`), attributes: attrs({ "gen_ai.conversation.id": `c-${tag}` }) }));
    const answer = await post(spans);
    expect(answer.partialSuccess.rejectedSpans ?? "0").toBe("0");
    expect(answer.partialSuccess.errorMessage).toMatch(/^2 spans naming the conversation or agent of a trace past the first 10,000 of the request/);
    const stored = await (await db()).otelTraceLink.count({ where: { conversationId: `c-${tag}` } });
    expect(stored).toBe(10_000);
  });
});
