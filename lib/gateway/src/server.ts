/**
 * The gateway as an MCP server: one low-level `Server` per MCP session, over stdio and over
 * Streamable HTTP (`/mcp`, stateful sessions), each offering the upstreams' tools and handing
 * every tools/call to the Gateway. Started and stopped by `startGateway`.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  isInitializeRequest,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { Reconcile } from "@reconcile/client";
import { createHash } from "node:crypto";
import { ConfigError, type GatewayConfig } from "./config.js";
import { Gateway } from "./gateway.js";
import { Journal } from "./journal.js";
import { healthLine } from "./health.js";
import { Upstreams } from "./upstreams.js";

export const GATEWAY_VERSION = "0.1.0";
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** How long the gateway waits for the user's answer to an upstream's elicitation. */
const ELICIT_TIMEOUT_MS = 10 * 60_000;

export type RunningGateway = {
  /** The HTTP listener's URL (`http://host:port/mcp`), when it listens on HTTP. */
  url: string | null;
  /** The project's pages in Reconcile (`/p/{slug}`), when the token could be checked at start. */
  project: string | null;
  gateway: Gateway;
  reconcile: Reconcile;
  stop: () => Promise<void>;
};

function mcpServer(gateway: Gateway, upstreams: Upstreams, sessionId: () => string): Server {
  const server = new Server(
    { name: "reconcile-gateway", version: GATEWAY_VERSION },
    {
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true }, completions: {}, logging: {} },
      instructions: upstreams.instructions(),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: gateway.listTools() }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const token = request.params._meta?.progressToken;
    return gateway.callTool(request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>, {
      sessionId: sessionId(),
      requestId: extra.requestId,
      client: server.getClientVersion(),
      meta: request.params._meta as Record<string, unknown> | undefined,
      signal: extra.signal,
      // An upstream's elicitation goes back on this call's own stream (sendRequest: relatedRequestId); a person may take minutes.
      elicit: server.getClientCapabilities()?.elicitation
        ? (params, signal) => extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema, { signal, timeout: ELICIT_TIMEOUT_MS })
        : undefined,
      progress:
        token === undefined
          ? undefined
          : (progress, total, message) =>
              extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) } }),
    });
  });
  // Prompts, resources and completions pass through unrecorded: they change nothing.
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: upstreams.listPrompts() }));
  server.setRequestHandler(GetPromptRequestSchema, async (r, extra) => upstreams.getPrompt(r.params.name, r.params.arguments, { signal: extra.signal }));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: upstreams.listResources() }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: upstreams.listResourceTemplates() }));
  server.setRequestHandler(ReadResourceRequestSchema, async (r, extra) => upstreams.readResource(r.params.uri, { signal: extra.signal }));
  server.setRequestHandler(CompleteRequestSchema, async (r, extra) => upstreams.complete(r.params, { signal: extra.signal }));
  return server;
}

/** Reads a JSON body (at most 4 MiB), or answers 400/413 itself and returns undefined. */
async function jsonBody(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      res.writeHead(413, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32600, message: "request body over 4 MiB" }, id: null }));
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "the body is not JSON" }, id: null }));
    return undefined;
  }
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

function listenHttp(gateway: Gateway, upstreams: Upstreams, host: string, port: number, allowed: string[] | undefined): Promise<{ http: HttpServer; url: string; sessions: Map<string, { transport: StreamableHTTPServerTransport; server: Server }> }> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server }>();
  // A web page must not reach a gateway on this machine through a name it controls (DNS rebinding):
  // only the Host names given, or on loopback the loopback ones, are answered.
  const allowedHosts = () => {
    if (allowed) return allowed;
    if (!LOOPBACK.has(host)) return undefined;
    const p = (http.address() as AddressInfo).port;
    return ["127.0.0.1", "localhost", "[::1]"].map((h) => `${h}:${p}`);
  };
  const http = createServer(async (req, res) => {
    try {
      const pathname = new URL(req.url ?? "/", "http://gateway").pathname;
      if (pathname === "/health" && req.method === "GET") {
        // Which upstreams are up (docs/GATEWAY.md "Restarts"); answered, like /mcp, only to the allowed Host names.
        const hosts = allowedHosts();
        if (hosts && !hosts.includes(req.headers.host ?? "")) {
          res.writeHead(403, { "content-type": "text/plain" }).end("this Host is not allowed\n");
          return;
        }
        const health = upstreams.health();
        res.writeHead(health.status === "down" ? 503 : 200, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(health));
        return;
      }
      if (pathname !== "/mcp") {
        res.writeHead(404, { "content-type": "text/plain" }).end("the MCP endpoint is /mcp\n");
        return;
      }
      const id = req.headers["mcp-session-id"];
      const known = typeof id === "string" ? sessions.get(id) : undefined;
      if (req.method !== "POST") {
        if (!known) {
          res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "no such MCP session" }, id: null }));
          return;
        }
        await known.transport.handleRequest(req, res);
        return;
      }
      const body = await jsonBody(req, res);
      if (body === undefined) return;
      if (known) {
        await known.transport.handleRequest(req, res, body);
        return;
      }
      if (id !== undefined || !isInitializeRequest(body)) {
        res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "start with an initialize request (no valid MCP session)" }, id: null }));
        return;
      }
      let sessionId = "";
      const hosts = allowedHosts();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        ...(hosts ? { enableDnsRebindingProtection: true, allowedHosts: hosts } : {}),
        onsessioninitialized: (sid) => {
          sessionId = sid;
          sessions.set(sid, { transport, server });
        },
      });
      transport.onclose = () => {
        if (sessionId) sessions.delete(sessionId);
      };
      const server = mcpServer(gateway, upstreams, () => sessionId);
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32603, message: (e as Error).message }, id: null }));
    }
  });
  return new Promise((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => {
      const a = http.address() as AddressInfo;
      resolve({ http, url: `http://${host.includes(":") ? `[${host}]` : host}:${a.port}/mcp`, sessions });
    });
  });
}

/**
 * Asks Reconcile who the token is (`GET /api/v1/token`) before anything is forwarded: a token it
 * refuses, or one without the ingest and read scopes, stops the start (a ConfigError: exit 2)
 * instead of forwarding calls whose records would be refused and lost. Unreachable, the gateway
 * starts anyway (calls are recorded once Reconcile answers; critical tools are held meanwhile).
 * Returns the project's base path (`/p/{slug}`), for the answers' links.
 */
async function checkToken(reconcile: Reconcile, tokenEnv: string, log: (line: string) => void): Promise<string | null> {
  let res;
  try {
    res = await reconcile.api("GET", "/api/v1/token", { timeoutMs: 10_000 });
  } catch (e) {
    log(`Reconcile could not be reached to check the token (${(e as Error).message}): starting anyway; records wait in the journal`);
    return null;
  }
  const body = res.body as { kind?: string; scopes?: string[]; project?: { slug?: string; base_path?: string }; error?: { message?: string } } | null;
  if (res.status === 401 || res.status === 403) {
    throw new ConfigError(`Reconcile refused the token in ${tokenEnv} (${res.status}): ${body?.error?.message ?? "token unknown or revoked"}`);
  }
  if (res.status !== 200) {
    log(`could not check the token (HTTP ${res.status}): starting anyway`);
    return null;
  }
  const missing = body?.kind === "token" ? ["ingest", "read"].filter((s) => !body.scopes?.includes(s)) : [];
  if (missing.length) throw new ConfigError(`the token in ${tokenEnv} lacks the ${missing.join(" and ")} scope${missing.length > 1 ? "s" : ""}: the gateway records calls (ingest) and reads their outcomes (read)`);
  return typeof body?.project?.base_path === "string" ? body.project.base_path : null;
}

/**
 * Connects to the upstreams, resends what a previous run left in the journal, and listens.
 * `env` supplies the Reconcile token (`reconcile.token_env`) and the upstreams' secrets.
 */
export async function startGateway(config: GatewayConfig, opts: { env?: NodeJS.ProcessEnv; log?: (line: string) => void } = {}): Promise<RunningGateway> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? ((line: string) => process.stderr.write(`reconcile-gateway: ${line}\n`));
  const token = env[config.reconcile.token_env];
  if (!token) throw new Error(`set ${config.reconcile.token_env} to a Reconcile API token with the ingest and read scopes`);
  // A token Reconcile stops accepting (revoked while the gateway runs) refuses whole requests
  // 401/403: their records stay queued and in the journal, sent again with backoff, and the log
  // says how many wait (at most once a minute), so none is lost until a new token is set.
  let authRefused: { status: number; error: string } | null = null;
  let lastAuthLine = 0;
  const reconcile = new Reconcile({
    url: config.reconcile.url,
    token,
    retryAuthFailures: true,
    onEvent: (e) => {
      if (e.kind === "rejected") log(`Reconcile refused the record for ${e.operation_id} (${e.status} ${e.code}): ${e.message}`);
      if (e.kind === "dropped") log(`the record for ${e.operation_id} was dropped (${e.reason}); it stays in the journal for the next start`);
      if (e.kind === "retrying") {
        authRefused = e.status === 401 || e.status === 403 ? { status: e.status, error: e.error } : null;
        if (authRefused && Date.now() - lastAuthLine > 60_000) {
          lastAuthLine = Date.now();
          log(`${reconcile.stats().queued} records wait: Reconcile refuses the token in ${config.reconcile.token_env} (${e.status} ${e.error}); they stay in the journal and are sent again with backoff, or by the next start with a new token`);
        }
      }
    },
  });
  // Before anything is sent: a refused token stops the start, leaving the journal as it was.
  const project = await checkToken(reconcile, config.reconcile.token_env, log);
  const journal = new Journal(config.journal_dir ?? null);
  const leftover = journal.adopt();
  for (const r of leftover) await reconcile.record(r);
  if (leftover.length) log(`resending ${leftover.length} records a previous run left undelivered`);

  // One upstream that does not start does not stop the others: it is tried again with the backoff.
  const upstreams = new Upstreams(config.upstreams, env, log, Date.now, config.names);
  await upstreams.connect();
  const health = upstreams.health();
  if (health.status !== "ok") log(`starting degraded: ${healthLine(health)}`);
  const gateway = new Gateway(config, upstreams, reconcile, journal, Date.now, createHash("sha256").update(token).digest("hex").slice(0, 16));
  if (project) gateway.setProjectPath(project);
  const servers: Server[] = [];

  let stdioServer: Server | null = null;
  if (config.listen.stdio) {
    const sid = `stdio-${randomUUID()}`;
    stdioServer = mcpServer(gateway, upstreams, () => sid);
    servers.push(stdioServer);
    await stdioServer.connect(new StdioServerTransport());
  }
  let http: Awaited<ReturnType<typeof listenHttp>> | null = null;
  if (config.listen.http) http = await listenHttp(gateway, upstreams, config.listen.http.host, config.listen.http.port, config.listen.http.allowed_hosts);
  const everyServer = (fn: (s: Server) => Promise<void>) => {
    for (const s of [...servers, ...[...(http?.sessions.values() ?? [])].map((x) => x.server)]) void fn(s).catch(() => undefined);
  };
  upstreams.onToolsChanged = () => everyServer((s) => s.sendToolListChanged());
  upstreams.onPromptsChanged = () => everyServer((s) => s.sendPromptListChanged());
  upstreams.onResourcesChanged = () => everyServer((s) => s.sendResourceListChanged());
  // An upstream's log lines, under its name, at the level each client set.
  upstreams.onLog = (name, params) => everyServer((s) => s.sendLoggingMessage({ ...params, logger: params.logger ? `${name}/${params.logger}` : name }, s.transport?.sessionId));

  // Every few seconds: seal the journal's segment, and delete the sealed ones once everything
  // queued before the seal was delivered or refused for good, with nothing dropped meanwhile
  // (a dropped record stays on disk for the next start to send).
  let compacting = false;
  const compactor = setInterval(async () => {
    if (compacting) return;
    compacting = true;
    try {
      const dropped = reconcile.stats().dropped;
      journal.seal();
      if ((await reconcile.settled(5_000)) && reconcile.stats().dropped === dropped) journal.delivered();
    } finally {
      compacting = false;
    }
  }, 5_000);
  compactor.unref();

  let stopped = false;
  return {
    url: http?.url ?? null,
    project,
    gateway,
    reconcile,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      clearInterval(compactor);
      if (http) {
        await Promise.allSettled([...http.sessions.values()].map((s) => s.transport.close()));
        http.http.closeAllConnections();
        await new Promise((r) => http!.http.close(r));
      }
      await Promise.allSettled(servers.map((s) => s.close()));
      await upstreams.close();
      const droppedBefore = reconcile.stats().dropped;
      journal.seal();
      // What could not be delivered in time stays in the journal for the next start.
      // Refused for the token, waiting longer changes nothing: what is left stays in the journal.
      const stats = await reconcile.close(authRefused ? 1_000 : 10_000);
      if (stats.dropped === droppedBefore) journal.delivered();
    },
  };
}
