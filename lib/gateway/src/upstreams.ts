/**
 * The real servers behind the gateway: one kept-connected link each (link.ts: stdio command or
 * Streamable HTTP URL, restarted with backoff), what they offer under one namespace (a name two
 * upstreams share becomes `{upstream}.{name}` for both, or every tool is `{upstream}__{tool}`:
 * names.ts), and requests forwarded to the
 * one that owns a tool, prompt or resource.
 */
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  type CallToolResult,
  type CompleteRequest,
  type CompleteResult,
  type ElicitRequest,
  type GetPromptResult,
  type LoggingMessageNotification,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { ConfigError, type Upstream } from "./config.js";
import { elicitationTarget, NOBODY_ASKED, type Elicit, type InFlightCall } from "./elicitation.js";
import { healthLine, healthOf, type Health } from "./health.js";
import { Link, type ListKind } from "./link.js";
import { clashMessage, exposeByKey, exposeTools, routeUri, type Exposed, type NameClash, type NameScheme } from "./names.js";

export { UpstreamDown } from "./link.js";

export type RoutedTool = { name: string; upstream: string; upstreamName: string; tool: Tool };

/**
 * Exposed names (names.ts): plain, a tool's own name or `{upstream}.{tool}` for every tool whose
 * name another upstream also offers; prefixed, always `{upstream}__{tool}`. Of two tools under one
 * name the one `earlier` routed is kept, and the clash is returned.
 */
export function exposedNames(byUpstream: Map<string, Tool[]>, scheme: NameScheme = "plain", earlier: ReadonlyMap<string, RoutedTool> = new Map()): { tools: RoutedTool[]; clashes: NameClash[] } {
  const was = (name: string) => {
    const t = earlier.get(name);
    return t && { upstream: t.upstream, original: t.upstreamName };
  };
  const { exposed, clashes } = exposeTools(byUpstream, (t) => t.name, scheme, was);
  return { tools: exposed.map((e) => ({ name: e.exposed, upstream: e.upstream, upstreamName: e.original, tool: { ...e.item, name: e.exposed } })), clashes };
}

export class Upstreams {
  private readonly links = new Map<string, Link>();
  private routed = new Map<string, RoutedTool>();
  private prompts = new Map<string, Exposed<Prompt>>();
  private resources = new Map<string, Exposed<Resource>>();
  private templates: Exposed<ResourceTemplate>[] = [];
  /** Called when a list changed (an upstream said so, or came back with another): sessions tell their clients. */
  onToolsChanged: (() => void) | null = null;
  onPromptsChanged: (() => void) | null = null;
  onResourcesChanged: (() => void) | null = null;
  /** An upstream's log line (notifications/message), for the clients. */
  onLog: ((upstream: string, params: LoggingMessageNotification["params"]) => void) | null = null;

  constructor(
    config: Record<string, Upstream>,
    env: NodeJS.ProcessEnv = process.env,
    private readonly log: (line: string) => void = () => undefined,
    now: () => number = Date.now,
    /** How tools are named (`names` in the configuration). */
    private readonly scheme: NameScheme = "plain",
  ) {
    const events = {
      now,
      listsChanged: (link: Link, kinds: ListKind[]) => this.changed(link, kinds),
      // Worth a line: a crash, a restart, a reconnect; not an upstream's first start, nor its stop with the gateway.
      stateChanged: (link: Link, event: string) => {
        if (event === "up" || link.state === "stopped") return;
        this.log(`upstream ${link.name}: ${event}. ${healthLine(this.health())}`);
      },
      log: (link: Link, params: LoggingMessageNotification["params"]) => this.onLog?.(link.name, params),
      elicit: async (link: Link, params: ElicitRequest["params"], signal: AbortSignal) => {
        const target = elicitationTarget(link.name, this.calling.get(link.name));
        if ("to" in target) return target.to(params, signal);
        this.log(target.none);
        return NOBODY_ASKED;
      },
    };
    for (const [name, u] of Object.entries(config)) this.links.set(name, new Link(name, u, env, events));
  }

  /**
   * Starts every upstream. One that fails to start does not stop the others: it is tried again
   * with the backoff, and `health()` says so. A stdio command that cannot be found is a
   * ConfigError naming it; so are two upstreams' tools under one name.
   */
  async connect(): Promise<void> {
    const results = await Promise.allSettled([...this.links.values()].map((l) => l.start()));
    const wrong = results.find((r): r is PromiseRejectedResult => r.status === "rejected" && r.reason instanceof ConfigError);
    if (wrong) {
      await this.close();
      throw wrong.reason;
    }
    // The names at start in the configuration's order, whichever upstream happened to list first.
    this.routed = new Map();
    const clashes = this.rebuild();
    if (clashes.length) {
      await this.close();
      throw new ConfigError(clashes.map((c) => clashMessage(c, this.scheme)).join("\n"));
    }
  }

  health(): Health {
    return healthOf(Object.fromEntries([...this.links].map(([n, l]) => [n, l.health()])));
  }

  /** Each upstream's own instructions, under its name. */
  instructions(): string | undefined {
    const parts = [...this.links.values()].filter((l) => l.instructions?.trim()).map((l) => `## ${l.name}\n${l.instructions!.trim()}`);
    return parts.length ? `Tools, prompts and resources of ${parts.length > 1 ? "these servers" : "this server"}, each under its name:\n\n${parts.join("\n\n")}` : undefined;
  }

  list(): Tool[] {
    return [...this.routed.values()].map((t) => t.tool);
  }

  tool(name: string): RoutedTool | undefined {
    return this.routed.get(name);
  }

  /** Calls in flight, per upstream: where an upstream's elicitation goes (elicitation.ts). */
  private readonly calling = new Map<string, Set<InFlightCall>>();

  /**
   * Forwards a call as it came (arguments and `_meta`), and returns the upstream's result
   * unchanged; throws UpstreamDown, unsent, while it is down. `elicit`: how to ask the calling
   * client, when it declared elicitation.
   */
  async call(t: RoutedTool, args: Record<string, unknown>, meta: Record<string, unknown> | undefined, options: RequestOptions, elicit: Elicit | null = null): Promise<CallToolResult> {
    const params = { name: t.upstreamName, arguments: args, ...(meta ? { _meta: meta } : {}) };
    const calls = this.calling.get(t.upstream) ?? new Set<InFlightCall>();
    this.calling.set(t.upstream, calls);
    const me: InFlightCall = { elicit };
    calls.add(me);
    try {
      return await this.link(t.upstream).use(async (c) => (await c.request({ method: "tools/call", params }, CallToolResultSchema, options)) as CallToolResult);
    } finally {
      calls.delete(me);
    }
  }

  listPrompts(): Prompt[] {
    return [...this.prompts.values()].map((e) => ({ ...e.item, name: e.exposed }));
  }

  listResources(): Resource[] {
    return [...this.resources.values()].map((e) => ({ ...e.item, uri: e.exposed }));
  }

  listResourceTemplates(): ResourceTemplate[] {
    return this.templates.map((e) => ({ ...e.item, uriTemplate: e.exposed }));
  }

  async getPrompt(name: string, args: Record<string, string> | undefined, options: RequestOptions): Promise<GetPromptResult> {
    const e = this.prompts.get(name);
    if (!e) throw new McpError(ErrorCode.InvalidParams, `no prompt named ${JSON.stringify(name)}: prompts/list says which there are`);
    return this.link(e.upstream).use((c) => c.getPrompt({ name: e.original, ...(args ? { arguments: args } : {}) }, options));
  }

  async readResource(uri: string, options: RequestOptions): Promise<ReadResourceResult> {
    const route = routeUri(uri, this.resources, this.templates, this.withResources());
    if (!route) throw new McpError(ErrorCode.InvalidParams, `no upstream offers the resource ${JSON.stringify(uri)}: resources/list and resources/templates/list say which there are`);
    const result = await this.link(route.upstream).use((c) => c.readResource({ uri: route.uri }, options));
    // The contents under the URI the client knows.
    return route.uri === uri ? result : { ...result, contents: result.contents.map((x) => (x.uri === route.uri ? { ...x, uri } : x)) };
  }

  async complete(params: CompleteRequest["params"], options: RequestOptions): Promise<CompleteResult> {
    const ref = params.ref;
    let upstream: string;
    let forwarded: CompleteRequest["params"];
    if (ref.type === "ref/prompt") {
      const e = this.prompts.get(ref.name);
      if (!e) throw new McpError(ErrorCode.InvalidParams, `no prompt named ${JSON.stringify(ref.name)}`);
      upstream = e.upstream;
      forwarded = { ...params, ref: { ...ref, name: e.original } };
    } else {
      const t = this.templates.find((x) => x.exposed === ref.uri);
      const route = t ? { upstream: t.upstream, uri: t.original } : routeUri(ref.uri, this.resources, this.templates, this.withResources());
      if (!route) throw new McpError(ErrorCode.InvalidParams, `no upstream offers the resource ${JSON.stringify(ref.uri)}`);
      upstream = route.upstream;
      forwarded = { ...params, ref: { ...ref, uri: route.uri } };
    }
    const link = this.link(upstream);
    if (link.state === "up" && !link.capabilities()?.completions) return { completion: { values: [] } };
    return link.use((c) => c.complete(forwarded, options));
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.links.values()].map((l) => l.stop()));
  }

  private link(name: string): Link {
    return this.links.get(name)!;
  }

  private withResources(): string[] {
    return [...this.links.values()].filter((l) => l.lists.resources.length || l.lists.templates.length || l.capabilities()?.resources).map((l) => l.name);
  }

  /** Upstreams whose tools were listed once already. */
  private readonly listed = new Set<string>();

  /** Clashes already logged: each is said once while it lasts. */
  private clashesSaid = new Set<string>();

  private changed(link: Link, kinds: ListKind[]): void {
    const before = new Set(this.routed.keys());
    // A clash that appears while running (a list changed, an upstream came up late) keeps the earlier tool.
    const said = new Set<string>();
    for (const c of this.rebuild()) {
      const line = `${clashMessage(c, this.scheme)}; ${c.kept.upstream}'s stays, ${c.dropped.upstream}'s is not offered`;
      said.add(line);
      if (!this.clashesSaid.has(line)) this.log(line);
    }
    this.clashesSaid = said;
    if (kinds.includes("tools")) {
      const after = new Set(this.routed.keys());
      const added = [...after].filter((n) => !before.has(n));
      const removed = [...before].filter((n) => !after.has(n));
      // An upstream's first list is no change.
      if (this.listed.has(link.name)) this.log(`the tools of ${link.name} changed${added.length ? `; added: ${added.join(", ")}` : ""}${removed.length ? `; removed: ${removed.join(", ")}` : ""}`);
      this.listed.add(link.name);
      this.onToolsChanged?.();
    }
    if (kinds.includes("prompts")) this.onPromptsChanged?.();
    if (kinds.includes("resources") || kinds.includes("templates")) this.onResourcesChanged?.();
  }

  private rebuild(): NameClash[] {
    const by = <K extends ListKind>(k: K) => new Map([...this.links].map(([n, l]) => [n, l.lists[k]]));
    const { tools, clashes } = exposedNames(by("tools"), this.scheme, this.routed);
    this.prompts = new Map(exposeByKey(by("prompts"), (p) => p.name).map((e) => [e.exposed, e]));
    this.resources = new Map(exposeByKey(by("resources"), (r) => r.uri).map((e) => [e.exposed, e]));
    this.templates = exposeByKey(by("templates"), (t) => t.uriTemplate);
    this.routed = new Map(tools.map((t) => [t.name, t]));
    return clashes;
  }
}
