import path from "node:path";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";
import { parseConfig } from "./src/config";
import type { Health } from "./src/health";
import { startGateway, type RunningGateway } from "./src/server";
import { startHttpUpstream } from "./examples/tools-server";

/**
 * The gateway's upstreams with real parts (issues 49 and 53): the official MCP SDK client, the
 * gateway, the project's example server killed mid-session and restarted, a server that does not
 * start and one that crashes after every start (a degraded start, backoff, low CPU), and
 * `@modelcontextprotocol/server-everything` whose resources, prompts, completions, instructions
 * and log lines pass through.
 */
const UPSTREAM = [process.execPath, "--import", "tsx", path.resolve("lib/gateway/examples/tools-server.ts")];
const EVERYTHING = [process.execPath, path.resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"];

let agent: { email: string; token: string };
const running: RunningGateway[] = [];
const clients: Client[] = [];
beforeAll(async () => {
  agent = await principal("viewer", ["ingest", "read"]);
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await Promise.allSettled(running.map((g) => g.stop()));
});

async function gateway(upstreams: Record<string, unknown>, lines: string[] = []): Promise<RunningGateway> {
  const config = parseConfig({ reconcile: { url: baseUrl }, listen: { http: { port: 0 } }, upstreams, journal_dir: null, tools: { "billing.charge": { operation_id_from: "/request_id" } } });
  const g = await startGateway(config, { env: { ...process.env, RECONCILE_TOKEN: agent.token }, log: (l) => lines.push(l) });
  running.push(g);
  return g;
}
async function mcpClient(url: string, name = unique("upstreams-agent")): Promise<Client> {
  const c = new Client({ name, version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(c);
  return c;
}
const health = async (g: RunningGateway): Promise<Health> => (await fetch(g.url!.replace(/\/mcp$/, "/health"))).json();
const text = (r: CallToolResult) => (r.content as { type: string; text: string }[]).map((c) => c.text).join("\n");
const callTool = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as CallToolResult;
async function until<T>(fn: () => Promise<T | null | undefined | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}
const operation = async (id: string) => (await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token: agent.token })).body;

describe("an upstream that exits mid-session", () => {
  it("is started again; calls while it is down are refused unsent and recorded rejected-not-sent, and their repeat is forwarded once it is back", async () => {
    const g = await gateway({ tools: { command: UPSTREAM } });
    const c = await mcpClient(g.url!);
    const changed: number[] = [];
    c.setNotificationHandler(ToolListChangedNotificationSchema, async () => void changed.push(Date.now()));
    const before = await health(g);
    expect(before).toMatchObject({ status: "ok", upstreams: { tools: { state: "up", restarts: 0, pid: expect.any(Number) } } });
    expect(text(await callTool(c, "billing.charge", { amount: 3, request_id: unique("before") }))).toMatch(/^charged 3 EUR/);

    process.kill(before.upstreams.tools.pid!, "SIGKILL");
    const down = await until(async () => ((await health(g)).upstreams.tools.state === "restarting" ? health(g) : null));
    expect(down.status).toBe("down");
    expect(down.upstreams.tools).toMatchObject({ last_error: "its process exited", next_attempt_at: expect.any(String), pid: null });
    // Its tools stay listed; a call answers that the server is restarting, and never left.
    expect((await c.listTools()).tools.map((t) => t.name)).toContain("billing.charge");
    const id = unique("while-down");
    const refused = await callTool(c, "billing.charge", { amount: 5, request_id: id });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^the tools server is restarting \(its process exited\); the call was not sent/);
    await g.reconcile.flush();
    const op = await operation(id);
    const receipt = op.stages.find((s: { stage: string }) => s.stage === "receipt");
    expect(receipt.payload).toMatchObject({ status: "rejected", raw: { not_sent: true, reason: expect.stringMatching(/restarting/) } });
    expect(op.effective_outcome).toBe("rejected");

    // Back: a new process, the same tools (no list change), and the repeat is forwarded.
    const after = await until(async () => ((await health(g)).upstreams.tools.state === "up" ? health(g) : null));
    expect(after.upstreams.tools.restarts).toBe(1);
    expect(after.upstreams.tools.pid).not.toBe(before.upstreams.tools.pid);
    const again = await callTool(c, "billing.charge", { amount: 5, request_id: id });
    expect(again.isError).toBeFalsy();
    expect(text(again)).toMatch(/^charged 5 EUR/);
    // The new process ran the charge once: the call while it was down never reached it.
    expect((await callTool(c, "calls", {})).structuredContent).toEqual({ "billing.charge": 1 });
    expect(changed).toEqual([]);
  }, 60_000);
});

describe("an upstream's tool list that changes", () => {
  it("is read again after a restart, and the clients are told", async () => {
    const marker = path.join(mkdtempSync(path.join(tmpdir(), "gw-marker-")), "started");
    const g = await gateway({ tools: { command: UPSTREAM, env: { MARKER_FILE: marker } } });
    const c = await mcpClient(g.url!);
    let told = 0;
    c.setNotificationHandler(ToolListChangedNotificationSchema, async () => void told++);
    expect((await c.listTools()).tools.map((t) => t.name)).not.toContain("restarted");
    process.kill((await health(g)).upstreams.tools.pid!, "SIGKILL");
    await until(async () => told > 0);
    expect((await c.listTools()).tools.map((t) => t.name)).toContain("restarted");
    expect(text(await callTool(c, "restarted", {}))).toBe("restarted");
  }, 60_000);

  it("an upstream's own list_changed re-reads that upstream, and the clients are told", async () => {
    const g = await gateway({ grows: { command: UPSTREAM, env: { GROWABLE: "1" } }, everything: { command: EVERYTHING } });
    const c = await mcpClient(g.url!);
    let told = 0;
    c.setNotificationHandler(ToolListChangedNotificationSchema, async () => void told++);
    expect(text(await callTool(c, "grow", {}))).toBe("grown_1");
    await until(async () => told > 0);
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(["grown_1", "echo"]));
    expect(text(await callTool(c, "grown_1", {}))).toBe("grown_1");
  }, 60_000);
});

describe("an HTTP upstream that goes away", () => {
  it("is reconnected; a call while nothing listens is refused unsent, and the repeat is answered once it listens again", async () => {
    let up = await startHttpUpstream(0);
    const port = Number(new URL(up.url).port);
    const g = await gateway({ remote: { url: up.url } });
    const c = await mcpClient(g.url!);
    expect(text(await callTool(c, "billing.charge", { amount: 4, request_id: unique("http-before") }))).toMatch(/^charged 4 EUR/);

    await up.close();
    const id = unique("http-down");
    const refused = await callTool(c, "billing.charge", { amount: 6, request_id: id });
    expect(text(refused)).toMatch(/^the remote server is restarting \(the connection was refused\); the call was not sent/);
    expect((await health(g)).upstreams.remote).toMatchObject({ state: "restarting", last_error: "the connection was refused" });
    await g.reconcile.flush();
    const receipt = (await operation(id)).stages.find((s: { stage: string }) => s.stage === "receipt");
    expect(receipt.payload).toMatchObject({ status: "rejected", raw: { not_sent: true } });

    up = await startHttpUpstream(port);
    try {
      await until(async () => (await health(g)).upstreams.remote.state === "up");
      expect(text(await callTool(c, "billing.charge", { amount: 6, request_id: id }))).toMatch(/^charged 6 EUR/);
      expect(up.counts).toEqual({ "billing.charge": 1 });
    } finally {
      await up.close();
    }
  }, 60_000);
});

describe("a degraded start", () => {
  it("starts with the upstreams that run, says which is down, keeps trying with the backoff, and does not busy-loop", async () => {
    const lines: string[] = [];
    const g = await gateway(
      {
        tools: { command: UPSTREAM },
        broken: { command: [process.execPath, "-e", "process.exit(3)"] },
        crashy: { command: UPSTREAM, env: { EXIT_AFTER_MS: "2500" } },
      },
      lines,
    );
    expect(lines.find((l) => l.startsWith("starting degraded:"))).toMatch(/not up: broken \(restarting: cannot start: .*; next attempt /);
    const c = await mcpClient(g.url!);
    const first = await health(g);
    expect(first.status).toBe("degraded");
    expect(first.upstreams.tools.state).toBe("up");
    expect(first.upstreams.broken).toMatchObject({ state: "restarting", tools: 0, last_error: expect.stringMatching(/^cannot start: /) });
    // The two copies of the example server share their tool names: each under its upstream's.
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["tools.billing.charge", "crashy.billing.charge"]));
    expect(text(await callTool(c, "tools.billing.charge", { amount: 2, request_id: unique("degraded") }))).toMatch(/^charged 2 EUR/);

    // Ten seconds of a server that never starts and one that crashes after every start.
    const cpu = process.cpuUsage();
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 10_000));
    const used = process.cpuUsage(cpu);
    const share = (used.user + used.system) / 1000 / (Date.now() - t0);
    expect(share).toBeLessThan(0.05);
    const later = await health(g);
    // 1 s, 2 s, 4 s, 8 s: at most four restarts in ten seconds.
    expect(later.upstreams.broken.restarts).toBeGreaterThanOrEqual(2);
    expect(later.upstreams.broken.restarts).toBeLessThanOrEqual(4);
    expect(later.upstreams.crashy.restarts).toBeGreaterThanOrEqual(1);
    expect(later.upstreams.tools).toMatchObject({ state: "up", restarts: 0 });
    // The crashing server's tools say so while it is down.
    await until(async () => (await health(g)).upstreams.crashy.state === "restarting");
    const r = await callTool(c, "crashy.billing.fail", { amount: 1 });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^the crashy server is restarting/);
    expect(lines.some((l) => /^upstream crashy: its process exited; starting it again in \d+s\./.test(l))).toBe(true);
  }, 60_000);

  it("refuses to start (exit 2, naming it) when an upstream's command does not exist", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "gw-missing-"));
    const file = path.join(dir, "reconcile-gateway.json");
    writeFileSync(file, JSON.stringify({ reconcile: { url: baseUrl }, listen: { http: { port: 0 } }, journal_dir: null, upstreams: { ghost: { command: ["no-such-mcp-server-xyz", "--stdio"] } } }));
    const child = spawn(process.execPath, ["--import", "tsx", path.resolve("lib/gateway/src/main.ts"), "--config", file], { env: { ...process.env, RECONCILE_TOKEN: agent.token }, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once("exit", r));
    expect(code).toBe(2);
    expect(err).toContain('upstreams.ghost.command: cannot run "no-such-mcp-server-xyz" (ENOENT');
  }, 30_000);
});

describe("everything but tools passes through", () => {
  let g: RunningGateway;
  let c: Client;
  const who = unique("passthrough-agent");
  const logs: { logger?: string; level: string }[] = [];
  beforeAll(async () => {
    g = await gateway({ everything: { command: EVERYTHING }, tools: { command: UPSTREAM } });
    c = await mcpClient(g.url!, who);
    c.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => void logs.push(n.params));
  });

  it("lists and reads resources and resource templates", async () => {
    const resources = (await c.listResources()).resources;
    expect(resources.length).toBeGreaterThan(0);
    const read = await c.readResource({ uri: resources[0].uri });
    expect(read.contents[0].uri).toBe(resources[0].uri);
    const templates = (await c.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    expect(templates).toContain("demo://resource/dynamic/text/{resourceId}");
    const dynamic = await c.readResource({ uri: "demo://resource/dynamic/text/3" });
    expect(dynamic.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/3", text: expect.any(String) });
  });

  it("lists and gets prompts, and completes their arguments", async () => {
    const prompts = (await c.listPrompts()).prompts.map((p) => p.name);
    expect(prompts).toEqual(expect.arrayContaining(["simple-prompt", "completable-prompt"]));
    const got = await c.getPrompt({ name: "simple-prompt" });
    expect(got.messages[0].content).toEqual({ type: "text", text: "This is a simple prompt without arguments." });
    const done = await c.complete({ ref: { type: "ref/prompt", name: "completable-prompt" }, argument: { name: "department", value: "S" } });
    expect(done.completion.values).toEqual(["Sales", "Support"]);
  });

  it("gives the upstreams' instructions under their names, and their log lines under their names", async () => {
    expect(c.getInstructions()).toMatch(/^## everything\n/m);
    await c.setLoggingLevel("debug");
    expect(text(await callTool(c, "toggle-simulated-logging", {}))).toMatch(/^Started simulated/);
    await until(async () => logs.length > 0, 15_000);
    expect(logs[0].logger).toMatch(/^everything/);
  }, 30_000);

  it("records none of it: of this agent's requests, only its one tools/call is an operation", async () => {
    await g.reconcile.flush();
    const list = await call(`/api/v1/operations?agent=${encodeURIComponent(who)}&limit=50`, { token: agent.token });
    const rows = (list.body.operations ?? list.body.items) as { tool: string }[];
    expect(rows.map((r) => r.tool)).toEqual(["toggle-simulated-logging"]);
  });
});
