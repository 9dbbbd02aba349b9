import path from "node:path";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { baseUrl, call, ingest, principal, unique } from "@/lib/testing/integration";
import { verdictTraceContext } from "@/lib/domain/verdicts/event";
import { parseConfig } from "./src/config";
import { startGateway, type RunningGateway } from "./src/server";
import { startHttpUpstream } from "./examples/tools-server";

/**
 * The gateway with real parts (issue 40 part 2): the official MCP SDK client, the gateway, and a
 * real MCP server started here, over stdio and Streamable HTTP, recording into the real server.
 */
const UPSTREAM = path.resolve("lib/gateway/examples/tools-server.ts");
const MAIN = path.resolve("lib/gateway/src/main.ts");
const node = (file: string) => [process.execPath, "--import", "tsx", file];

let agent: { email: string; token: string };
let reviewer: { email: string; token: string };
let verifier: { email: string; token: string };
const running: RunningGateway[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  agent = await principal("viewer", ["ingest", "read"]);
  reviewer = await principal("reviewer", ["review", "read"]);
  verifier = await principal("reviewer", ["verify"]);
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await Promise.allSettled(running.map((g) => g.stop()));
});

const tools = {
  "billing.charge": { critical: true, operation_id_from: "/request_id", approval: { when: [{ pointer: "/amount", gt: 100 }] } },
  "billing.slow": { timeout: "700ms" },
  "billing.refund": { approval: { expires: "1500ms" } },
  calls: { record: false },
};

async function gateway(upstreams: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<RunningGateway> {
  const config = parseConfig({ reconcile: { url: baseUrl }, listen: { http: { port: 0 } }, upstreams, tools, journal_dir: null, approval_progress_every: "1s", ...extra });
  const g = await startGateway(config, { env: { ...process.env, RECONCILE_TOKEN: agent.token }, log: () => undefined });
  running.push(g);
  return g;
}

async function mcpClient(url: string, name = "itest-agent"): Promise<Client> {
  const c = new Client({ name, version: "9.9.9" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(c);
  return c;
}

const callTool = async (c: Client, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;
const text = (r: CallToolResult) => (r.content as { type: string; text: string }[]).map((c) => c.text).join("\n");
const counts = async (c: Client) => (await callTool(c, "calls", {})).structuredContent as Record<string, number>;
const operation = async (id: string) => (await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token: agent.token })).body;
/** The newest operation of a tool in this trajectory. */
async function latest(tool: string, agentName: string) {
  const list = await call(`/api/v1/operations?tool=${encodeURIComponent(tool)}&agent=${encodeURIComponent(agentName)}&limit=5`, { token: agent.token });
  return list.body.operations?.[0] ?? list.body.items?.[0];
}
async function until<T>(fn: () => Promise<T | null | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}
async function heldId(tool: string): Promise<string> {
  return until(async () => {
    const r = await call("/api/v1/approvals?limit=200", { token: reviewer.token });
    return (r.body.rows as { operation_id: string; tool: string }[]).filter((x) => x.tool === tool).map((x) => x.operation_id).at(-1);
  });
}

describe("the MCP gateway over Streamable HTTP, upstream over stdio", () => {
  let g: RunningGateway;
  let c: Client;
  let who: string;
  beforeAll(async () => {
    g = await gateway({ tools: { command: node(UPSTREAM) } });
    who = unique("agent");
    c = await mcpClient(g.url!, who);
  });

  it("offers the upstream's tools and records a call as an operation, with the MCP session, request id and trace context", async () => {
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["social.publish", "billing.charge", "billing.fail", "billing.slow", "calls"]));
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const r = await callTool(c, "social.publish", { text: unique("hello") }, { traceparent });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ id: expect.any(String) });
    await g.reconcile.flush();
    const row = await latest("social.publish", who);
    const op = await operation(row.operation_id);
    expect(op.operation_id).toMatch(/^gw:[0-9a-f]{64}:\d+$/);
    expect(op.agent).toEqual({ name: who, version: "9.9.9" });
    expect(op.trajectory_id).toMatch(/^mcp:/);
    const receipt = op.stages.find((s: { stage: string }) => s.stage === "receipt");
    expect(receipt.payload).toMatchObject({ status: "accepted", raw: { structuredContent: r.structuredContent } });
    const intent = op.stages.find((s: { stage: string }) => s.stage === "intent");
    expect(intent.envelope.mcp).toMatchObject({ "mcp.session.id": expect.any(String), "jsonrpc.request.id": expect.anything(), upstream: "tools", tool: "social.publish" });
    expect(op.otel).toMatchObject({ traceparent, trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", parent_span_id: "00f067aa0ba902b7" });
    expect(op.effective_outcome).toBe("uncertain");
    // Its verdict, exported as an OpenTelemetry event (lib/verdicts/), belongs under the caller's span.
    expect(verdictTraceContext(op.operation_id, intent.envelope)).toEqual({ trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", span_id: "00f067aa0ba902b7", parented: true });
  });

  it("answers only its own host names: a page cannot reach it through a name it controls (DNS rebinding)", async () => {
    const { request } = await import("node:http");
    const url = new URL(g.url!);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, path: "/mcp", method: "POST", headers: { host: `evil.example:${url.port}`, "content-type": "application/json", accept: "application/json, text/event-stream" } },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "evil", version: "1" } } }));
    });
    expect(status).toBe(403);
  });

  it("refuses a request id that already names another call: it never gets that call's result", async () => {
    const requestId = unique("reused");
    expect(text(await callTool(c, "billing.charge", { amount: 10, request_id: requestId }))).toMatch(/^charged 10 EUR/);
    const other = await callTool(c, "billing.charge", { amount: 99, request_id: requestId });
    expect(other.isError).toBe(true);
    expect(text(other)).toBe(`not sent: operation ${requestId} is another call (other arguments); send this one with a request id of its own`);
  });

  it("a request id of .. is one operation named by its digest: three calls charge once, and every attempt is on record", async () => {
    const before = (await counts(c))["billing.charge"] ?? 0;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await callTool(c, "billing.charge", { amount: 7, request_id: ".." }));
    expect(text(answers[0])).toMatch(/^charged 7 EUR/);
    for (const again of answers.slice(1)) {
      expect(again.isError).toBe(true);
      expect(text(again)).toMatch(/^not sent again: the earlier billing\.charge call is uncertain .*operation gw-id:[0-9a-f]{64}/);
    }
    expect((await counts(c))["billing.charge"]).toBe(before + 1);
    const id = /operation (gw-id:[0-9a-f]{64})/.exec(text(answers[1]))![1];
    expect((await operation(id)).stages.find((s: { stage: string }) => s.stage === "receipt").payload.status).toBe("accepted");
  });

  it("a request id of 10,000 characters, or with control characters, is refused before anything is sent or recorded", async () => {
    const before = (await counts(c))["billing.charge"] ?? 0;
    const long = await callTool(c, "billing.charge", { amount: 8, request_id: "x".repeat(10_000) });
    expect(long.isError).toBe(true);
    expect(text(long)).toBe("not sent: /request_id is 10000 characters long: an operation id has at most 200; nothing was recorded");
    const control = await callTool(c, "billing.charge", { amount: 8, request_id: "ab\u0007c" });
    expect(control.isError).toBe(true);
    expect(text(control)).toMatch(/^not sent: \/request_id holds control characters/);
    expect((await counts(c))["billing.charge"]).toBe(before);
  });

  it("refuses to repeat an uncertain call, and the upstream never sees the repeat", async () => {
    const args = { text: unique("once") };
    await callTool(c, "social.publish", args);
    const before = (await counts(c))["social.publish"];
    const again = await callTool(c, "social.publish", args);
    expect(again.isError).toBe(true);
    expect(text(again)).toMatch(/^not sent again: the earlier social\.publish call is uncertain \(the write was accepted, but canonical read-back is unavailable\); a reviewer must reconcile operation gw:/);
    expect((await counts(c))["social.publish"]).toBe(before);
  });

  it("catches a repeat across sessions: the same agent reconnected is refused, another agent's call is its own", async () => {
    const args = { text: unique("across sessions") };
    const first = await callTool(c, "social.publish", args);
    const before = (await counts(c))["social.publish"];
    const reconnected = await mcpClient(g.url!, who);
    const again = await callTool(reconnected, "social.publish", args);
    expect(again.isError).toBe(true);
    expect(text(again)).toMatch(/^not sent again: the earlier social\.publish call is uncertain/);
    expect(again._meta?.["reconcile/outcome"]).toMatchObject({ operation_id: (first._meta?.["reconcile/outcome"] as { operation_id: string }).operation_id });
    expect((await counts(c))["social.publish"]).toBe(before);
    const other = await mcpClient(g.url!, unique("another-agent"));
    expect((await callTool(other, "social.publish", args)).isError).toBeFalsy();
    expect((await counts(c))["social.publish"]).toBe(before + 1);
  });

  it("replays a verified call's recorded result instead of running it again", async () => {
    const args = { text: unique("verified") };
    const first = await callTool(c, "social.publish", args);
    await g.reconcile.flush();
    const id = (await latest("social.publish", who)).operation_id;
    const read = await ingest(verifier.token, { operation_id: id, canonical_read: { status: "match", observed_at: new Date().toISOString(), evidence: { object_id: (first.structuredContent as { id: string }).id } } });
    expect(read.body.outcome).toBe("verified");
    const before = (await counts(c))["social.publish"];
    const replayed = await callTool(c, "social.publish", args);
    expect(replayed.isError).toBeFalsy();
    expect(text(replayed)).toMatch(new RegExp(`^already done \\(verified, operation ${id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\): `));
    expect(replayed.structuredContent).toEqual(first.structuredContent);
    expect((await counts(c))["social.publish"]).toBe(before);
  });

  it("records a refusal as rejected and forwards its repeat as a new attempt that recovers it", async () => {
    const args = { amount: 12 };
    const first = await callTool(c, "billing.fail", args);
    expect(first).toMatchObject({ isError: true });
    expect(text(first)).toBe("the card was declined");
    await g.reconcile.flush();
    const id = (await latest("billing.fail", who)).operation_id;
    expect(await operation(id)).toMatchObject({ effective_outcome: "rejected" });
    const before = (await counts(c))["billing.fail"];
    await callTool(c, "billing.fail", args);
    expect((await counts(c))["billing.fail"]).toBe(before + 1);
    await g.reconcile.flush();
    const second = await operation(`${id}~2`);
    expect(second.effective_outcome).toBe("rejected");
    expect(second.recovers).toEqual([id]);
  });

  it("leaves a call that timed out without a receipt (uncertain), and refuses its repeat", async () => {
    const r = await callTool(c, "billing.slow", { ms: 3000 });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/fate is unknown .* Reconcile holds operation gw:\S+ as uncertain/);
    await g.reconcile.flush();
    const op = await operation((await latest("billing.slow", who)).operation_id);
    expect(op.stages.map((s: { stage: string }) => s.stage)).toEqual(["intent"]);
    expect(op).toMatchObject({ effective_outcome: "uncertain", reason: "no receipt recorded" });
    const again = await callTool(c, "billing.slow", { ms: 3000 });
    expect(text(again)).toMatch(/^not sent again: the earlier billing\.slow call is uncertain \(no receipt recorded\)/);
  });

  it("holds a risky call until a reviewer approves it, then forwards it once", async () => {
    const small = await callTool(c, "billing.charge", { amount: 20, request_id: unique("small") });
    expect(text(small)).toMatch(/^charged 20 EUR/);
    const requestId = unique("big");
    const before = (await counts(c))["billing.charge"];
    // A client that asks for progress hears that its call still waits (every second here).
    const progress: string[] = [];
    const pending = c.callTool({ name: "billing.charge", arguments: { amount: 250, request_id: requestId } }, undefined, {
      onprogress: (p) => void progress.push(p.message ?? ""),
      timeout: 30_000,
    }) as Promise<CallToolResult>;
    const id = await heldId("billing.charge");
    expect(id).toBe(requestId);
    expect((await operation(id)).approval).toMatchObject({ status: "pending", rule: "billing.charge: /amount > 100" });
    expect((await counts(c))["billing.charge"]).toBe(before);
    await until(async () => progress.length > 0);
    expect(progress[0]).toMatch(new RegExp(`^waiting for a reviewer's approval in Reconcile \\(operation ${id}; expires in \\d+s\\)$`));
    const decided = await call(`/api/v1/operations/${id}/approval`, { token: reviewer.token, body: { decision: "approve", reason: "the customer confirmed by phone" } });
    expect(decided.status).toBe(201);
    const result = await pending;
    expect(text(result)).toMatch(/^charged 250 EUR/);
    expect((await counts(c))["billing.charge"]).toBe(before + 1);
    await g.reconcile.flush();
    const op = await operation(id);
    expect(op.approval).toMatchObject({ status: "approved", used_by: agent.email });
    expect(op.stages.find((s: { stage: string }) => s.stage === "receipt").payload.status).toBe("accepted");
  });

  it("denied: the client gets the reviewer's reason and the upstream never sees the call", async () => {
    const before = (await counts(c))["billing.charge"];
    const pending = callTool(c, "billing.charge", { amount: 900, request_id: unique("deny") });
    const id = await heldId("billing.charge");
    await call(`/api/v1/operations/${id}/approval`, { token: reviewer.token, body: { decision: "deny", reason: "over the customer's limit" } });
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(`not sent: billing.charge was denied by ${reviewer.email}: over the customer's limit`);
    expect((await counts(c))["billing.charge"]).toBe(before);
    // A repeat of a denied call is never forwarded either.
    const again = await callTool(c, "billing.charge", { amount: 900, request_id: id });
    expect(text(again)).toMatch(/^not sent: billing\.charge was denied by/);
  });
});

describe("the gateway with an upstream over Streamable HTTP", () => {
  it("expires a held call that nobody approves, and records each outcome", async () => {
    const up = await startHttpUpstream();
    try {
      const g = await gateway({ pay: { url: up.url } }, { tools: { ...tools, "billing.charge": { approval: { expires: "1500ms" } } } });
      const who = unique("agent");
      const c = await mcpClient(g.url!, who);
      const r = await callTool(c, "billing.charge", { amount: 5 });
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/^not sent: no reviewer approved billing\.charge within \d+m \(operation gw:/);
      expect(up.counts["billing.charge"] ?? 0).toBe(0);
      await g.reconcile.flush();
      const op = await operation((await latest("billing.charge", who)).operation_id);
      expect(op).toMatchObject({ effective_outcome: "rejected", approval: { status: "expired" } });
    } finally {
      await up.close();
    }
  });

  it("two gateway instances waiting on one approval forward the call once", async () => {
    const up = await startHttpUpstream();
    try {
      const [g1, g2] = [await gateway({ pay: { url: up.url } }), await gateway({ pay: { url: up.url } })];
      const [c1, c2] = [await mcpClient(g1.url!), await mcpClient(g2.url!)];
      const requestId = unique("twice");
      const args = { amount: 400, request_id: requestId };
      const first = callTool(c1, "billing.charge", args);
      await until(async () => (await operation(requestId))?.approval?.status === "pending");
      const second = callTool(c2, "billing.charge", args);
      await new Promise((r) => setTimeout(r, 500)); // the second is waiting on the same approval
      await call(`/api/v1/operations/${requestId}/approval`, { token: reviewer.token, body: { decision: "approve", reason: "ok" } });
      const results = await Promise.all([first, second]);
      expect(up.counts["billing.charge"]).toBe(1);
      expect(results.filter((r) => !r.isError)).toHaveLength(1);
      expect(text(results.find((r) => r.isError)!)).toMatch(/already forwarded/);
    } finally {
      await up.close();
    }
  });

  it("when Reconcile cannot be reached: a critical tool is held, any other is forwarded and recorded later", async () => {
    const up = await startHttpUpstream();
    try {
      const config = parseConfig({ reconcile: { url: "http://127.0.0.1:9" }, listen: { http: { port: 0 } }, upstreams: { pay: { url: up.url } }, tools, journal_dir: mkdtempSync(path.join(tmpdir(), "gw-")) });
      const g = await startGateway(config, { env: { ...process.env, RECONCILE_TOKEN: agent.token }, log: () => undefined });
      running.push(g);
      const c = await mcpClient(g.url!);
      const held = await callTool(c, "billing.charge", { amount: 5, request_id: unique("down") });
      expect(held.isError).toBe(true);
      expect(text(held)).toMatch(/Reconcile cannot be reached .* billing\.charge is held/);
      expect(up.counts["billing.charge"] ?? 0).toBe(0);
      const open = await callTool(c, "social.publish", { text: "while Reconcile is down" });
      expect(open.isError).toBeFalsy();
      expect(up.counts["social.publish"]).toBe(1);
    } finally {
      await up.close();
    }
  });
});

describe("a token revoked while the gateway runs", () => {
  it("leaves the records in the journal, sent again once a new token is set: none lost", { timeout: 60_000 }, async () => {
    const who = await principal("viewer", ["ingest", "read"]);
    const tokens = await import("@/lib/store/people/api-tokens");
    const first = await tokens.createApiToken({ email: who.email, name: "to revoke", scopes: ["ingest", "read"], actor: "itest" });
    const journal = mkdtempSync(path.join(tmpdir(), "gateway-revoked-"));
    const configFile = path.join(journal, "reconcile-gateway.json");
    writeFileSync(configFile, JSON.stringify({ reconcile: { url: baseUrl }, listen: { http: { port: 0 } }, upstreams: { tools: { command: node(UPSTREAM), cwd: process.cwd() } }, tools, journal_dir: journal }));
    // The first gateway is a process of its own (a restart is a new process: it adopts a gone one's journal).
    const g1 = spawn(process.execPath, ["--import", "tsx", MAIN, "--config", configFile], { env: { ...process.env, RECONCILE_TOKEN: first.token }, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    const url = await new Promise<string>((resolve, reject) => {
      g1.stderr!.on("data", (d: Buffer) => {
        err += d.toString();
        const m = /ready on (http:\/\/\S+\/mcp)/.exec(err);
        if (m) resolve(m[1]);
      });
      g1.once("exit", (code) => reject(new Error(`the gateway exited (${code}): ${err}`)));
    });
    const agentName = unique("revoked-agent");
    const c1 = new Client({ name: agentName, version: "1.0.0" });
    await c1.connect(new StreamableHTTPClientTransport(new URL(url)));
    await tokens.revokeToken({ id: first.id, ownerId: null, actor: "itest" });
    // Another process (the server) forgets a revoked token within its cache's few seconds.
    await until(async () => (await call("/api/v1/token", { token: first.token })).status === 401, 15_000);
    const texts = Array.from({ length: 3 }, (_, i) => `${agentName} post ${i}`);
    for (const t of texts) expect((await callTool(c1, "social.publish", { text: t })).isError).toBeFalsy();
    await until(async () => /records wait: Reconcile refuses the token in RECONCILE_TOKEN \(401/.test(err), 15_000);
    await c1.close();
    g1.kill("SIGTERM");
    await new Promise((r) => g1.once("exit", r));
    expect(await call(`/api/v1/operations?agent=${encodeURIComponent(agentName)}&limit=10`, { token: agent.token }).then((r) => r.body.items.length)).toBe(0);

    // A new token for the same account: the next start sends what the journal kept.
    const second = await tokens.createApiToken({ email: who.email, name: "replacement", scopes: ["ingest", "read"], actor: "itest" });
    const lines: string[] = [];
    const g2 = await startGateway(parseConfig({ reconcile: { url: baseUrl }, listen: { http: { port: 0 } }, upstreams: { tools: { command: node(UPSTREAM) } }, tools, journal_dir: journal }), {
      env: { ...process.env, RECONCILE_TOKEN: second.token },
      log: (line) => lines.push(line),
    });
    running.push(g2);
    expect(lines).toContain("resending 6 records a previous run left undelivered");
    await g2.reconcile.flush();
    const stored = (await call(`/api/v1/operations?agent=${encodeURIComponent(agentName)}&limit=10`, { token: second.token })).body.items as { operation_id: string }[];
    expect(stored).toHaveLength(3);
    for (const op of stored) {
      const full = await call(`/api/v1/operations/${encodeURIComponent(op.operation_id)}`, { token: second.token });
      expect(full.body.stages.map((s: { stage: string }) => s.stage)).toEqual(["intent", "receipt"]);
    }
  });
});

describe("the gateway over stdio", () => {
  it("is started by an MCP client as its server command and records the client's calls", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "gw-stdio-"));
    const file = path.join(dir, "reconcile-gateway.json");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(file, JSON.stringify({ reconcile: { url: baseUrl }, listen: { stdio: true }, upstreams: { tools: { command: node(UPSTREAM), cwd: process.cwd() } }, tools }));
    const who = unique("stdio-agent");
    const c = new Client({ name: who, version: "1.0.0" });
    await c.connect(new StdioClientTransport({ command: process.execPath, args: ["--import", "tsx", MAIN, "--config", file], env: { ...process.env, RECONCILE_TOKEN: agent.token } as Record<string, string>, stderr: "ignore" }));
    clients.push(c);
    const r = await callTool(c, "social.publish", { text: unique("via stdio") });
    expect(r.isError).toBeFalsy();
    const row = await until(() => latest("social.publish", who));
    const op = await until(async () => {
      const o = await operation(row.operation_id);
      return o.stages.length === 2 ? o : null;
    });
    expect(op.trajectory_id).toMatch(/^mcp:stdio-/);
    expect(op.agent.name).toBe(who);
    await c.close();
  });
});
