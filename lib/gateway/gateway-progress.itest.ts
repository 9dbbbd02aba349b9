/**
 * Progress and cancellation pass through the gateway (issue 53 item 2), with real parts: the
 * official MCP SDK client → the gateway → `@modelcontextprotocol/server-everything` (whose
 * `trigger-long-running-operation` reports progress) and the example tools server (whose
 * `billing.slow` counts a cancellation it received), recording into the real server.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";
import { parseConfig } from "./src/config";
import { startGateway, type RunningGateway } from "./src/server";

const EVERYTHING = [process.execPath, path.resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"];
const TOOLS = [process.execPath, "--import", "tsx", path.resolve("lib/gateway/examples/tools-server.ts")];
const LONG = "trigger-long-running-operation";

let agent: { email: string; token: string };
let g: RunningGateway;
let c: Client;
let who: string;

beforeAll(async () => {
  agent = await principal("viewer", ["ingest", "read"]);
  const config = parseConfig({
    reconcile: { url: baseUrl },
    listen: { http: { port: 0 } },
    upstreams: { everything: { command: EVERYTHING }, tools: { command: TOOLS } },
    // Recorded (server-everything annotates it read-only), each call its own operation; 1.5 s of silence is too long.
    tools: { [LONG]: { kind: "write", dedupe: false, timeout: "1500ms" }, "billing.slow": { dedupe: false }, calls: { record: false } },
    journal_dir: null,
  });
  g = await startGateway(config, { env: { ...process.env, RECONCILE_TOKEN: agent.token }, log: () => undefined });
  who = unique("progress-agent");
  c = new Client({ name: who, version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(g.url!)));
}, 60_000);
afterAll(async () => {
  await c?.close();
  await g?.stop();
});

const text = (r: CallToolResult) => (r.content as { type: string; text: string }[]).map((x) => x.text).join("\n");
const outcome = (r: CallToolResult) => r._meta?.["reconcile/outcome"] as { operation_id: string; outcome: string };
const operation = async (id: string) => (await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token: agent.token })).body;
async function until<T>(fn: () => Promise<T | null | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the upstream's progress reaches the client", () => {
  it("under the client's own token, every step; and each restarts the timeout, so a 3 s call outlives its 1.5 s", async () => {
    const seen: Progress[] = [];
    const started = Date.now();
    // The SDK client gives its own progressToken and hands what comes back under it to onprogress.
    const r = (await c.callTool({ name: LONG, arguments: { duration: 3, steps: 6 } }, undefined, { onprogress: (p) => void seen.push(p), timeout: 30_000 })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(text(r)).toContain("Long running operation completed. Duration: 3 seconds, Steps: 6.");
    expect(Date.now() - started).toBeGreaterThan(2_900);
    // Every step, in order. The last may be lost: the SDK (1.32) hands a notification to its handler a
    // microtask later but a response at once, so progress sent just before the result can arrive
    // after its request was settled (at either hop).
    expect(seen.length).toBeGreaterThanOrEqual(5);
    expect(seen.map((p) => [p.progress, p.total])).toEqual([1, 2, 3, 4, 5, 6].slice(0, seen.length).map((i) => [i, 6]));
    // Its receipt (sent with the next batch): accepted, the call was not cut off.
    const op = await until(async () => {
      const o = await operation(outcome(r).operation_id);
      return o.stages?.length === 2 ? o : undefined;
    });
    expect(op.stages.map((s: { stage: string }) => s.stage)).toEqual(["intent", "receipt"]);
    expect(op.stages[1].payload).toMatchObject({ status: "accepted" });
  });

  it("the same call without progress in time (one step, at the end) is cut off at 1.5 s: the progress was what kept it going", async () => {
    const started = Date.now();
    const r = (await c.callTool({ name: LONG, arguments: { duration: 3, steps: 1 } }, undefined, { onprogress: () => undefined, timeout: 30_000 })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_900);
    expect(outcome(r)).toMatchObject({ outcome: "uncertain" });
  });
});

describe("a client's cancellation reaches the upstream", () => {
  it("the upstream hears notifications/cancelled; the operation has no receipt and an attempt saying the agent cancelled", async () => {
    const before = ((await c.callTool({ name: "calls", arguments: {} })) as CallToolResult).structuredContent as Record<string, number>;
    const abort = new AbortController();
    const pending = c.callTool({ name: "billing.slow", arguments: { ms: 8_000 } }, undefined, { signal: abort.signal, timeout: 30_000 });
    // Once the upstream runs it (counted), the agent gives up.
    await until(async () => {
      const now = ((await c.callTool({ name: "calls", arguments: {} })) as CallToolResult).structuredContent as Record<string, number>;
      return (now["billing.slow"] ?? 0) > (before["billing.slow"] ?? 0);
    });
    abort.abort("the agent gave up");
    await expect(pending).rejects.toThrow();
    await until(async () => {
      const now = ((await c.callTool({ name: "calls", arguments: {} })) as CallToolResult).structuredContent as Record<string, number>;
      return (now["billing.slow:cancelled"] ?? 0) === (before["billing.slow:cancelled"] ?? 0) + 1;
    });
    // The operation: its intent, no receipt (the upstream may have acted), and what the agent was told.
    const list = await call(`/api/v1/operations?tool=billing.slow&agent=${encodeURIComponent(who)}&limit=5`, { token: agent.token });
    const id = (list.body.operations ?? list.body.items)[0].operation_id as string;
    const op = await until(async () => {
      const o = await operation(id);
      return o.attempts?.length ? o : undefined;
    });
    expect(op.stages.map((s: { stage: string }) => s.stage)).toEqual(["intent"]);
    expect(op.effective_outcome).toBe("uncertain");
    expect(op.attempts).toEqual([expect.objectContaining({ answer: "fate_unknown", outcome: "uncertain", text: "the agent cancelled the call before the upstream answered: whether billing.slow took effect is unknown" })]);
  });
});
