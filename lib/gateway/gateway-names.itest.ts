/**
 * `"names": "prefixed"` (issue 53 item 1), with real parts: the official MCP SDK client → the
 * gateway → example tools servers over stdio, recording into the real server. Every tool is
 * `{upstream}__{tool}` in the alphabet model APIs accept, rules match every spelling, and a clash
 * is a configuration error at start, a log line (the earlier tool kept) when it appears later.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { baseUrl, principal } from "@/lib/testing/integration";
import { ConfigError, parseConfig } from "./src/config";
import { startGateway, type RunningGateway } from "./src/server";

const UPSTREAM = [process.execPath, "--import", "tsx", path.resolve("lib/gateway/examples/tools-server.ts")];
const MODEL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

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

async function gateway(upstreams: Record<string, unknown>, tools: Record<string, unknown> = {}, lines: string[] = []): Promise<RunningGateway> {
  const config = parseConfig({ reconcile: { url: baseUrl }, listen: { http: { port: 0 } }, names: "prefixed", upstreams, tools, journal_dir: null });
  const g = await startGateway(config, { env: { ...process.env, RECONCILE_TOKEN: agent.token }, log: (l) => lines.push(l) });
  running.push(g);
  return g;
}
async function mcpClient(url: string): Promise<Client> {
  const c = new Client({ name: "names-agent", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(c);
  return c;
}
const callTool = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as CallToolResult;
const text = (r: CallToolResult) => (r.content as { type: string; text: string }[]).map((x) => x.text).join("\n");
const outcome = (r: CallToolResult) => r._meta?.["reconcile/outcome"] as { operation_id: string; outcome: string } | undefined;
async function until<T>(fn: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('"names": "prefixed"', () => {
  it("lists every tool as {upstream}__{tool}, a name model APIs accept; rules match the exposed name, {upstream}.{tool} and the own name", async () => {
    const g = await gateway(
      { shop: { command: UPSTREAM }, bank: { command: UPSTREAM } },
      {
        "shop.billing.slow": { timeout: "300ms" }, // {upstream}.{tool}
        bank__billing_slow: { record: false }, // the exposed name
        calls: { record: false }, // the upstream's own name
      },
    );
    const c = await mcpClient(g.url!);
    const names = (await c.listTools()).tools.map((t) => t.name);
    for (const n of names) expect(n).toMatch(MODEL_NAME);
    expect(names).toEqual(expect.arrayContaining(["shop__billing_charge", "bank__billing_charge", "shop__calls", "bank__social_publish", "reconcile_status"]));
    expect(names.filter((n) => n.includes("."))).toEqual([]);

    // shop's rule (by {upstream}.{tool}): cut off at 300 ms, recorded, its fate unknown.
    const slow = await callTool(c, "shop__billing_slow", { ms: 3_000 });
    expect(slow.isError).toBe(true);
    expect(outcome(slow)).toMatchObject({ outcome: "uncertain" });
    // bank's rule (by the exposed name): unrecorded, so no outcome in _meta, and not cut off.
    const bank = await callTool(c, "bank__billing_slow", { ms: 500 });
    expect(text(bank)).toBe("charged, slowly");
    expect(outcome(bank)).toBeUndefined();
    // calls (by the upstream's own name): each upstream's own counts, unrecorded.
    const counts = await callTool(c, "bank__calls", {});
    expect(counts.structuredContent).toEqual({ "billing.slow": 1 });
    expect(outcome(counts)).toBeUndefined();
  }, 60_000);

  it("two upstreams' tools under one name stop the start, naming both upstreams", async () => {
    // "a" + "__" + "_calls" and "a_" + "__" + "calls" are both a___calls.
    const start = gateway({ a: { command: UPSTREAM, env: { EXTRA_TOOL: "_calls" } }, a_: { command: UPSTREAM } });
    await expect(start).rejects.toBeInstanceOf(ConfigError);
    await expect(start).rejects.toThrow(`tool names clash under "names": "prefixed": the upstream a's tool "_calls" and the upstream a_'s tool "calls" both become "a___calls" (rename one of the upstreams a and a_)`);
  }, 60_000);

  it("a clash that appears later is logged, the tool that had the name keeps it, and the gateway goes on", async () => {
    const lines: string[] = [];
    const g = await gateway({ a: { command: UPSTREAM, env: { GROWABLE: "1" } }, a_: { command: UPSTREAM } }, {}, lines);
    const c = await mcpClient(g.url!);
    let told = 0;
    c.setNotificationHandler(ToolListChangedNotificationSchema, async () => void told++);
    expect(text(await callTool(c, "a__grow", { name: "_calls" }))).toBe("_calls");
    const line = await until(async () => lines.find((l) => l.includes("clash")));
    expect(line).toBe(`tool names clash under "names": "prefixed": the upstream a_'s tool "calls" and the upstream a's tool "_calls" both become "a___calls" (rename one of the upstreams a_ and a); a_'s stays, a's is not offered`);
    await until(async () => told > 0);
    // a___calls is still a_'s calls (its counts), not a's new tool (which would answer "_calls").
    const r = await callTool(c, "a___calls", {});
    expect(r.structuredContent).toEqual({});
    expect(text(await callTool(c, "a__grow", {}))).toBe("grown_1");
    await until(async () => (await c.listTools()).tools.some((t) => t.name === "a__grown_1"));
    expect(lines.filter((l) => l.includes("clash"))).toHaveLength(1); // said once while it lasts
  }, 60_000);
});
