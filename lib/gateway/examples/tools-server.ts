/**
 * A real MCP tool server (the official SDK's McpServer) for the gateway's tests and the demo:
 * `social.publish` (through the demo social service when SOCIAL_URL is set, else in memory),
 * `social.read` (read-only), `profile.set_name` (idempotent), `billing.charge`, `billing.fail`
 * (always refused), `billing.slow` (answers after `ms`; a cancellation is counted as
 * `billing.slow:cancelled`) and `calls` (how many times each tool
 * ran, so a test can see what the gateway never forwarded).
 *
 *   node --import tsx lib/gateway/examples/tools-server.ts            # stdio
 *   node --import tsx lib/gateway/examples/tools-server.ts --http 0   # Streamable HTTP, prints its URL
 *   EXIT_AFTER_MS=1500 node --import tsx lib/gateway/examples/tools-server.ts   # exits 1.5 s after each start
 */
import { randomUUID } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export type Counts = Record<string, number>;

export function upstreamServer(counts: Counts = {}, env: NodeJS.ProcessEnv = process.env): McpServer {
  const server = new McpServer({ name: "example-tools", version: "1.0.0" });
  const ran = (tool: string) => (counts[tool] = (counts[tool] ?? 0) + 1);

  server.registerTool(
    "social.publish",
    {
      description: "Publish one post on the social account. Send the same request_id when you repeat a call.",
      inputSchema: { text: z.string().min(1).max(280), request_id: z.string().max(200).optional() },
      outputSchema: { id: z.string(), url: z.string() },
      annotations: { destructiveHint: false, idempotentHint: false },
    },
    async ({ text }) => {
      ran("social.publish");
      let id = randomUUID().slice(0, 12);
      if (env.SOCIAL_URL) {
        const res = await fetch(`${env.SOCIAL_URL}/2/posts`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text }) });
        if (!res.ok) return { isError: true, content: [{ type: "text", text: `the social API refused the post (${res.status})` }] };
        id = ((await res.json()) as { data: { id: string } }).data.id;
      }
      const post = { id, url: `${env.SOCIAL_URL ?? "https://social.example"}/posts/${id}` };
      return { content: [{ type: "text", text: JSON.stringify(post) }], structuredContent: post };
    },
  );
  server.registerTool(
    "billing.charge",
    { description: "Charge the customer's card.", inputSchema: { amount: z.number().positive(), currency: z.string().default("EUR"), request_id: z.string().max(200).optional() } },
    async ({ amount, currency }) => {
      ran("billing.charge");
      return { content: [{ type: "text", text: `charged ${amount} ${currency} (charge ch_${randomUUID().slice(0, 8)})` }] };
    },
  );
  server.registerTool("billing.fail", { description: "A charge the bank always declines.", inputSchema: { amount: z.number() } }, async () => {
    ran("billing.fail");
    return { isError: true, content: [{ type: "text", text: "the card was declined" }] };
  });
  server.registerTool("billing.slow", { description: "A charge whose answer takes `ms`.", inputSchema: { ms: z.number().int().min(0).max(120_000) } }, async ({ ms }, extra) => {
    ran("billing.slow");
    // A cancellation (notifications/cancelled) is counted, so a test can see it arrived.
    extra.signal.addEventListener("abort", () => ran("billing.slow:cancelled"), { once: true });
    await new Promise((r) => setTimeout(r, ms));
    return { content: [{ type: "text", text: "charged, slowly" }] };
  });
  server.registerTool(
    "social.read",
    {
      description: "Read one post by its id (changes nothing).",
      inputSchema: { id: z.string().min(1).max(200) },
      annotations: { readOnlyHint: true, idempotentHint: true },
    },
    async ({ id }) => {
      ran("social.read");
      if (!env.SOCIAL_URL) return { content: [{ type: "text", text: JSON.stringify({ id }) }] };
      const res = await fetch(`${env.SOCIAL_URL}/2/posts/${encodeURIComponent(id)}`);
      return { content: [{ type: "text", text: await res.text() }], ...(res.ok ? {} : { isError: true }) };
    },
  );
  let displayName = "";
  server.registerTool(
    "profile.set_name",
    {
      description: "Set the account's display name (setting the same name again changes nothing).",
      inputSchema: { name: z.string().min(1).max(100) },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    async ({ name }) => {
      ran("profile.set_name");
      displayName = name;
      return { content: [{ type: "text", text: `display name: ${displayName}` }] };
    },
  );
  server.registerTool("calls", { description: "How many times each tool ran." }, async () => ({ content: [{ type: "text", text: JSON.stringify(counts) }], structuredContent: { ...counts } }));
  // For the gateway's list-change and name tests: `grow` adds a tool (the server tells its
  // client), named `name` or grown_N; EXTRA_TOOL names one more tool offered from the start; with
  // MARKER_FILE set, a process started after the first offers `restarted` too.
  if (env.EXTRA_TOOL) server.registerTool(env.EXTRA_TOOL, { description: "A tool named by EXTRA_TOOL." }, async () => ({ content: [{ type: "text", text: env.EXTRA_TOOL! }] }));
  if (env.GROWABLE === "1") {
    let n = 0;
    server.registerTool("grow", { description: "Adds a tool named `name`, or grown_N.", inputSchema: { name: z.string().min(1).max(100).optional() } }, async (args) => {
      const name = args.name ?? `grown_${++n}`;
      server.registerTool(name, { description: "A tool added at run time." }, async () => ({ content: [{ type: "text", text: name }] }));
      return { content: [{ type: "text", text: name }] };
    });
  }
  if (env.MARKER_FILE) {
    if (existsSync(env.MARKER_FILE)) server.registerTool("restarted", { description: "Offered after a restart." }, async () => ({ content: [{ type: "text", text: "restarted" }] }));
    else writeFileSync(env.MARKER_FILE, String(process.pid));
  }
  return server;
}

/** The same server over Streamable HTTP on 127.0.0.1 (a new server per session). */
export async function startHttpUpstream(port = 0, counts: Counts = {}) {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void sessions.set(sid, transport!) });
      await upstreamServer(counts).connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((r) => http.listen(port, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    counts,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    },
  };
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const i = process.argv.indexOf("--http");
  if (i >= 0) {
    const up = await startHttpUpstream(Number(process.argv[i + 1] ?? 0));
    process.stdout.write(`${up.url}\n`);
  } else {
    await upstreamServer().connect(new StdioServerTransport());
  }
  // A server that crashes soon after every start (the restart tests): EXIT_AFTER_MS=1500.
  if (process.env.EXIT_AFTER_MS) setTimeout(() => process.exit(1), Number(process.env.EXIT_AFTER_MS));
}
