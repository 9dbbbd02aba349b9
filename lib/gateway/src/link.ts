/**
 * One upstream MCP server behind the gateway, kept connected: a stdio server that exits is
 * started again, an HTTP server whose connection fails is reconnected, both with the restart
 * backoff (backoff.ts). While it is down, what it offered stays known (its tools stay listed) and
 * every request to it throws `UpstreamDown` without being sent.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  type ElicitRequest,
  type ElicitResult,
  McpError,
  type LoggingMessageNotification,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { Backoff } from "./backoff.js";
import { ConfigError, substituteEnv, type Upstream } from "./config.js";
import type { UpstreamHealth, UpstreamState } from "./health.js";

const VERSION = "0.1.0";
/** How long the SDK client waits after a list_changed before re-reading that list (it debounces). */
const LIST_DEBOUNCE_MS = 300;

export type Lists = { tools: Tool[]; prompts: Prompt[]; resources: Resource[]; templates: ResourceTemplate[] };
export type ListKind = keyof Lists;

/** A request to an upstream that is not up: it was not sent. */
export class UpstreamDown extends Error {
  constructor(
    readonly upstream: string,
    readonly reason: string,
  ) {
    super(`the ${upstream} server is restarting (${reason}); the call was not sent: try again in a few seconds`);
    this.name = "UpstreamDown";
  }
}

export type LinkEvents = {
  listsChanged: (link: Link, kinds: ListKind[]) => void;
  stateChanged: (link: Link, event: string) => void;
  log: (link: Link, params: LoggingMessageNotification["params"]) => void;
  /** The upstream asks the user something (elicitation/create, form mode): the answer to give it. */
  elicit: (link: Link, params: ElicitRequest["params"], signal: AbortSignal) => Promise<ElicitResult>;
  now: () => number;
};

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

export class Link {
  state: UpstreamState = "starting";
  lists: Lists = { tools: [], prompts: [], resources: [], templates: [] };
  instructions: string | undefined;
  private client: Client | null = null;
  private pid: number | null = null;
  private since: number;
  private restarts = 0;
  private lastError: string | null = null;
  private nextAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Bumped whenever a client is given up: events of an older client are ignored. */
  private generation = 0;
  private readonly backoff = new Backoff();
  private refreshing: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    private readonly config: Upstream,
    private readonly env: NodeJS.ProcessEnv,
    private readonly events: LinkEvents,
  ) {
    this.since = events.now();
  }

  get stdio(): boolean {
    return "command" in this.config;
  }

  /** What the upstream declared it offers (null until it was first up). */
  capabilities() {
    return this.client?.getServerCapabilities() ?? null;
  }

  /**
   * One start: connect and read what it offers. A failure schedules the next start (backoff)
   * and is thrown; on the first start, a stdio command that cannot be found is a ConfigError
   * instead (nothing is scheduled: the configuration is wrong, not the server).
   */
  async start(): Promise<void> {
    const gen = ++this.generation;
    const client = new Client(
      { name: "reconcile-gateway", version: VERSION },
      {
        // Form-mode elicitation, relayed to the calling client when it can be told (elicitation.ts).
        capabilities: { elicitation: {} },
        listChanged: {
          tools: { autoRefresh: false, debounceMs: LIST_DEBOUNCE_MS, onChanged: () => this.refresh(gen, "tools") },
          prompts: { autoRefresh: false, debounceMs: LIST_DEBOUNCE_MS, onChanged: () => this.refresh(gen, "prompts") },
          resources: { autoRefresh: false, debounceMs: LIST_DEBOUNCE_MS, onChanged: () => this.refresh(gen, "resources", "templates") },
        },
      },
    );
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      if (gen === this.generation) this.events.log(this, n.params);
    });
    client.setRequestHandler(ElicitRequestSchema, (r, extra) => this.events.elicit(this, r.params, extra.signal));
    const transport = this.transport();
    client.onclose = () => {
      if (gen === this.generation) this.lost(this.stdio ? "its process exited" : "the connection closed");
    };
    try {
      await client.connect(transport);
      const lists = await readLists(client);
      if (gen !== this.generation) throw new Error("stopped");
      this.client = client;
      this.pid = transport instanceof StdioClientTransport ? transport.pid : null;
      this.instructions = client.getInstructions();
      const changed = (Object.keys(lists) as ListKind[]).filter((k) => JSON.stringify(lists[k]) !== JSON.stringify(this.lists[k]));
      this.lists = lists;
      this.backoff.up(this.events.now());
      this.lastError = null;
      this.nextAt = null;
      this.enter("up", this.restarts ? `up again (restart ${this.restarts})` : "up");
      if (changed.length) this.events.listsChanged(this, changed);
    } catch (e) {
      if (gen === this.generation) this.generation++;
      await client.close().catch(() => undefined);
      if (this.state === "stopped") throw e;
      const code = (e as NodeJS.ErrnoException).code;
      if (this.stdio && this.restarts === 0 && this.state === "starting" && (code === "ENOENT" || code === "EACCES")) {
        const u = this.config as { command: string[]; cwd?: string };
        this.stop();
        throw new ConfigError(`upstreams.${this.name}.command: cannot run ${JSON.stringify(u.command[0])} (${code}: no such program${u.cwd ? `, or no folder ${u.cwd}` : ""}, or not executable)`);
      }
      this.failed(`cannot start: ${messageOf(e)}`);
      throw e;
    }
  }

  /** Sends a request to the upstream if it is up; an HTTP upstream whose connection failed is reconnected. */
  async use<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    const client = this.client;
    if (this.state !== "up" || !client) throw new UpstreamDown(this.name, this.lastError ?? this.state);
    try {
      return await fn(client);
    } catch (e) {
      // A stdio server's exit closes its client (onclose); an HTTP connection fails only here.
      if (this.stdio || (e instanceof McpError && e.code !== ErrorCode.ConnectionClosed)) throw e;
      const unsent = notSent(e);
      this.lost(unsent ?? `the connection failed: ${messageOf(e)}`);
      // Refused before it reached the server: certainly not sent. Anything else: its fate is unknown.
      throw unsent ? new UpstreamDown(this.name, unsent) : e;
    }
  }

  health(): UpstreamHealth {
    return {
      state: this.state,
      since: new Date(this.since).toISOString(),
      restarts: this.restarts,
      last_error: this.lastError,
      next_attempt_at: this.nextAt === null ? null : new Date(this.nextAt).toISOString(),
      tools: this.lists.tools.length,
      pid: this.state === "up" ? this.pid : null,
    };
  }

  async stop(): Promise<void> {
    this.enter("stopped", "stopped");
    this.generation++;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    await client?.close().catch(() => undefined);
  }

  /** Re-reads the lists an upstream said changed, one refresh at a time. */
  private refresh(gen: number, ...kinds: ListKind[]): void {
    this.refreshing = this.refreshing.then(async () => {
      const client = this.client;
      if (gen !== this.generation || !client) return;
      try {
        const lists = await readLists(client, kinds);
        if (gen !== this.generation) return;
        const changed = kinds.filter((k) => JSON.stringify(lists[k]) !== JSON.stringify(this.lists[k]));
        for (const k of changed) this.lists[k] = lists[k] as never;
        if (changed.length) this.events.listsChanged(this, changed);
      } catch {
        // Down meanwhile: the restart reads everything again.
      }
    });
  }

  private lost(reason: string): void {
    if (this.state !== "up") return;
    this.generation++;
    const client = this.client;
    this.client = null;
    void client?.close().catch(() => undefined);
    this.failed(reason);
  }

  private failed(reason: string): void {
    const delay = this.backoff.down(this.events.now());
    this.lastError = reason;
    this.nextAt = this.events.now() + delay;
    this.enter("restarting", `${reason}; ${this.stdio ? "starting it" : "reconnecting"} again in ${delay / 1000}s`);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.restarts++;
      this.start().catch(() => undefined);
    }, delay);
    this.timer.unref();
  }

  private enter(state: UpstreamState, event: string): void {
    if (this.state === "stopped" && state !== "stopped") return;
    if (state !== this.state) this.since = this.events.now();
    this.state = state;
    this.events.stateChanged(this, event);
  }

  private transport() {
    const where = `upstreams.${this.name}`;
    const u = this.config;
    if ("command" in u) {
      const env = Object.fromEntries(Object.entries(u.env ?? {}).map(([k, v]) => [k, substituteEnv(v, this.env, `${where}.env.${k}`)]));
      // Only the default variables and the configured ones: the gateway's own secrets stay here.
      return new StdioClientTransport({ command: u.command[0], args: u.command.slice(1), env: { ...getDefaultEnvironment(), ...env }, cwd: u.cwd, stderr: "inherit" });
    }
    const headers = Object.fromEntries(Object.entries(u.headers ?? {}).map(([k, v]) => [k, substituteEnv(v, this.env, `${where}.headers.${k}`)]));
    return new StreamableHTTPClientTransport(new URL(u.url), { requestInit: { headers } });
  }
}

/**
 * Why an HTTP request certainly did not reach the upstream's server, or null: the connection was
 * refused (nothing listens), or the server said it no longer knows the session (404, the
 * Streamable HTTP answer to an ended session: it restarted).
 */
function notSent(e: unknown): string | null {
  const err = e as { code?: unknown; cause?: { code?: unknown } };
  if (err?.cause?.code === "ECONNREFUSED" || err?.code === "ECONNREFUSED") return "the connection was refused";
  if (e instanceof StreamableHTTPError && e.code === 404) return "it no longer knows the session (HTTP 404)";
  return null;
}

/** Every page of the lists the server declared (a list it declared but cannot give is empty). */
async function readLists(client: Client, kinds: ListKind[] = ["tools", "prompts", "resources", "templates"]): Promise<Lists> {
  const caps = client.getServerCapabilities() ?? {};
  const all = async <T>(page: (cursor?: string) => Promise<{ items: T[]; next?: string }>, optional: boolean): Promise<T[]> => {
    const out: T[] = [];
    let cursor: string | undefined;
    try {
      do {
        const p = await page(cursor);
        out.push(...p.items);
        cursor = p.next;
      } while (cursor);
    } catch (e) {
      if (!optional) throw e;
      return [];
    }
    return out;
  };
  const c = (cursor?: string) => (cursor ? { cursor } : undefined);
  const lists: Lists = { tools: [], prompts: [], resources: [], templates: [] };
  if (kinds.includes("tools") && caps.tools) lists.tools = await all(async (k) => ((r) => ({ items: r.tools, next: r.nextCursor }))(await client.listTools(c(k))), false);
  if (kinds.includes("prompts") && caps.prompts) lists.prompts = await all(async (k) => ((r) => ({ items: r.prompts, next: r.nextCursor }))(await client.listPrompts(c(k))), true);
  if (kinds.includes("resources") && caps.resources) lists.resources = await all(async (k) => ((r) => ({ items: r.resources, next: r.nextCursor }))(await client.listResources(c(k))), true);
  if (kinds.includes("templates") && caps.resources)
    lists.templates = await all(async (k) => ((r) => ({ items: r.resourceTemplates, next: r.nextCursor }))(await client.listResourceTemplates(c(k))), true);
  return lists;
}
