/**
 * An upstream's elicitation is relayed to the client whose call caused it (issue 53 item 5), with
 * real parts: the official MCP SDK client → the gateway → `@modelcontextprotocol/server-everything`,
 * whose `trigger-elicitation-request` asks the user for a form (it is offered only to a client that
 * declared elicitation: the gateway does). Only a client that declared the capability is asked,
 * and only while its call is the one call in flight to that upstream (MCP does not say which call
 * an elicitation belongs to); otherwise the upstream hears `cancel`.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest } from "@modelcontextprotocol/sdk/types.js";
import { baseUrl, principal, unique } from "@/lib/testing/integration";
import { parseConfig } from "./src/config";
import { startGateway, type RunningGateway } from "./src/server";

const EVERYTHING = [process.execPath, path.resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"];
const ELICIT = "trigger-elicitation-request";

let g: RunningGateway;
const lines: string[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  const agent = await principal("viewer", ["ingest", "read"]);
  const config = parseConfig({
    reconcile: { url: baseUrl },
    listen: { http: { port: 0 } },
    upstreams: { everything: { command: EVERYTHING } },
    tools: { [ELICIT]: { dedupe: false } },
    journal_dir: null,
  });
  g = await startGateway(config, { env: { ...process.env, RECONCILE_TOKEN: agent.token }, log: (l) => lines.push(l) });
}, 60_000);
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await g?.stop();
});

/** A client; with `answer`, one that declares elicitation and answers each request so. */
async function mcpClient(answer?: (r: ElicitRequest["params"]) => { action: "accept"; content: Record<string, string | number | boolean> }): Promise<Client> {
  const c = new Client({ name: unique("elicit-agent"), version: "1.0.0" }, answer ? { capabilities: { elicitation: {} } } : {});
  if (answer) c.setRequestHandler(ElicitRequestSchema, async (r) => answer(r.params));
  await c.connect(new StreamableHTTPClientTransport(new URL(g.url!)));
  clients.push(c);
  return c;
}
const text = (r: CallToolResult) => (r.content as { type: string; text: string }[]).map((x) => x.text).join("\n");

describe("an upstream's elicitation", () => {
  it("reaches the calling client that declared elicitation, and its answer reaches the upstream", async () => {
    const asked: string[] = [];
    const c = await mcpClient((p) => {
      asked.push(p.message);
      return { action: "accept", content: { name: "Ada Lovelace", check: true } };
    });
    const r = (await c.callTool({ name: ELICIT, arguments: {} })) as CallToolResult;
    expect(asked).toEqual(["Please provide inputs for the following fields:"]);
    expect(text(r)).toContain("✅ User provided the requested information!");
    expect(text(r)).toContain("- Name: Ada Lovelace");
    expect(text(r)).toContain("- Agreed to terms: true");
  }, 30_000);

  it("a client that did not declare elicitation is not asked: the upstream hears cancel, and the log says why", async () => {
    const c = await mcpClient();
    const r = (await c.callTool({ name: ELICIT, arguments: {} })) as CallToolResult;
    expect(text(r)).toContain("⚠️ User cancelled the elicitation dialog.");
    expect(lines).toContain("the upstream everything asked the user something, but the calling client did not declare the elicitation capability: answered cancel");
  }, 30_000);

  it("while another call to that upstream is in flight, nobody is asked (which call asked is not known): cancel", async () => {
    const asked: string[] = [];
    const c = await mcpClient((p) => {
      asked.push(p.message);
      return { action: "accept", content: { name: "nobody" } };
    });
    const other = await mcpClient();
    const long = other.callTool({ name: "trigger-long-running-operation", arguments: { duration: 3, steps: 1 } });
    await new Promise((r) => setTimeout(r, 300));
    const r = (await c.callTool({ name: ELICIT, arguments: {} })) as CallToolResult;
    expect(text(r)).toContain("⚠️ User cancelled the elicitation dialog.");
    expect(asked).toEqual([]);
    expect(lines).toContain("the upstream everything asked the user something while 2 calls to it were in flight, and MCP does not say which one asked: answered cancel");
    await long;
  }, 30_000);
});
