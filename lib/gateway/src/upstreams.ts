/**
 * The real tool servers behind the gateway: one MCP client each (stdio command or Streamable
 * HTTP URL), their tools under one namespace (a name two upstreams share becomes
 * `{upstream}.{tool}` for both), and calls forwarded to the one that owns a tool.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { CallToolResultSchema, ToolListChangedNotificationSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { substituteEnv, type Upstream } from "./config.js";

export type RoutedTool = { name: string; upstream: string; upstreamName: string; tool: Tool };

const VERSION = "0.1.0";

/** Exposed names: a tool's own name, or `{upstream}.{tool}` for every tool whose name another upstream also offers. */
export function exposedNames(byUpstream: Map<string, Tool[]>): RoutedTool[] {
  const count = new Map<string, number>();
  for (const tools of byUpstream.values()) for (const t of new Set(tools.map((t) => t.name))) count.set(t, (count.get(t) ?? 0) + 1);
  const out: RoutedTool[] = [];
  for (const [upstream, tools] of byUpstream) {
    for (const tool of tools) {
      const name = (count.get(tool.name) ?? 0) > 1 ? `${upstream}.${tool.name}` : tool.name;
      out.push({ name, upstream, upstreamName: tool.name, tool: { ...tool, name } });
    }
  }
  return out;
}

export class Upstreams {
  private readonly clients = new Map<string, Client>();
  private routed = new Map<string, RoutedTool>();
  /** Called when the tool list changed (an upstream said so): sessions tell their clients. */
  onToolsChanged: (() => void) | null = null;

  constructor(
    private readonly config: Record<string, Upstream>,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** Connects to every upstream and reads their tools; an upstream that cannot be reached is an error naming it. */
  async connect(): Promise<void> {
    await Promise.all(
      Object.entries(this.config).map(async ([name, u]) => {
        const client = new Client({ name: "reconcile-gateway", version: VERSION });
        try {
          await client.connect(this.transport(name, u));
        } catch (e) {
          throw new Error(`upstream ${name}: cannot connect (${(e as Error).message})`);
        }
        client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
          await this.refresh();
          this.onToolsChanged?.();
        });
        this.clients.set(name, client);
      }),
    );
    await this.refresh();
  }

  private transport(name: string, u: Upstream) {
    const where = `upstreams.${name}`;
    if ("command" in u) {
      const env = Object.fromEntries(Object.entries(u.env ?? {}).map(([k, v]) => [k, substituteEnv(v, this.env, `${where}.env.${k}`)]));
      // Only the default variables and the configured ones: the gateway's own secrets stay here.
      return new StdioClientTransport({ command: u.command[0], args: u.command.slice(1), env: { ...getDefaultEnvironment(), ...env }, cwd: u.cwd, stderr: "inherit" });
    }
    const headers = Object.fromEntries(Object.entries(u.headers ?? {}).map(([k, v]) => [k, substituteEnv(v, this.env, `${where}.headers.${k}`)]));
    return new StreamableHTTPClientTransport(new URL(u.url), { requestInit: { headers } });
  }

  /** Reads every upstream's tools again (all pages). */
  async refresh(): Promise<void> {
    const byUpstream = new Map<string, Tool[]>();
    for (const [name, client] of this.clients) {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined);
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      byUpstream.set(name, tools);
    }
    this.routed = new Map(exposedNames(byUpstream).map((t) => [t.name, t]));
  }

  list(): Tool[] {
    return [...this.routed.values()].map((t) => t.tool);
  }

  tool(name: string): RoutedTool | undefined {
    return this.routed.get(name);
  }

  /** Forwards a call as it came (arguments and `_meta`), and returns the upstream's result unchanged. */
  async call(t: RoutedTool, args: Record<string, unknown>, meta: Record<string, unknown> | undefined, options: RequestOptions): Promise<CallToolResult> {
    const client = this.clients.get(t.upstream)!;
    const params = { name: t.upstreamName, arguments: args, ...(meta ? { _meta: meta } : {}) };
    return (await client.request({ method: "tools/call", params }, CallToolResultSchema, options)) as CallToolResult;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.clients.values()].map((c) => c.close()));
    this.clients.clear();
  }
}
