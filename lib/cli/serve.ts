/**
 * The production server (`npm start` runs it after migrating): Next.js as a custom server
 * (https://nextjs.org/docs/app/guides/custom-server), with one route answered before Next's
 * router: POST /api/v1/receipts with a bearer token, by lib/api/ingest-node.ts, which runs the
 * same checks and the same ingest code as the route handler. Next.js's own request handling
 * costs about a millisecond a request here, which capped single-record ingest at ~700/s with a
 * p99 of ~170 ms at 50 connections; without it the same code serves ~3,000/s (BENCHMARKS.md).
 * Every other request, including ingest with a session cookie, is Next.js's.
 *
 * It also decides each request's client address (lib/auth/client-address.ts): the socket's, or
 * from X-Forwarded-For only as RECONCILE_TRUSTED_PROXIES allows, handed on in a header only this
 * server sets. And while no user exists and it listens on a non-loopback address, it prints the
 * one-time setup code that /setup asks for (lib/store/people/setup-code.ts).
 *
 * Environment: PORT (3000), HOSTNAME (all interfaces), DATABASE_URL, AUTH_SECRET,
 * KEEP_ALIVE_TIMEOUT_MS, RECONCILE_CHECKPOINT_EVERY (docs/AUDIT.md), the numeric settings of
 * lib/domain/settings.ts (docs/DEPLOY.md, "Settings"), RECONCILE_TRUSTED_PROXIES,
 * RECONCILE_JOBS (`off`: this instance runs no background jobs; lib/jobs/worker.ts),
 * RECONCILE_METRICS_PORT (GET /metrics without a token, on 127.0.0.1), LOG_LEVEL (the JSON log's).
 *
 * It also answers GET /metrics carrying a bearer token (Prometheus; lib/api/metrics-node.ts), and
 * gives every request an id, a log line and its time in the metrics (`observe`).
 * Needs a build (`npm run build`).
 *
 * Background jobs (verifiers' checks, webhooks' deliveries) run here, in the server's process:
 * the job worker claims them from the database under leases (lib/jobs/worker.ts).
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import next from "next";
import { parseCheckpointEvery } from "@/lib/domain/checkpoint";
import { openTarget } from "@/lib/archive/targets";
import { retentionSettings } from "@/lib/retention/config";
import { envSetting, settingProblems } from "@/lib/domain/settings";
import { parseSecretAllowlist } from "@/lib/domain/verifier-secrets";
import { CLIENT_ADDRESS_HEADER, clientAddress, isLoopbackHost, parseTrustedProxies, type TrustedProxies } from "@/lib/auth/client-address";
import { trustClientAddressHeader } from "@/lib/auth/request";
import { requestIdFrom, withRequest, type RequestContext } from "@/lib/observability/context";
import { requestRequiresProject } from "@/lib/store/db/project-context";
import { interactiveBegin } from "@/lib/store/db/priority";
import { INGEST_PATHS, isInteractive } from "@/lib/api/interactive";
import { log, logLevel } from "@/lib/observability/log";
import { metrics } from "@/lib/observability/metrics";
import { routeMatcher, templatesOf, type RouteMatcher } from "@/lib/observability/routes";

// Everything in this process is server code. `server-only` guards client bundles against
// server modules (Next.js resolves it per bundle); loaded here directly it would throw.
const require = createRequire(import.meta.url);
const serverOnly = require.resolve("server-only");
require.cache[serverOnly] = { id: serverOnly, filename: serverOnly, loaded: true, exports: {} } as NodeJS.Module;

/**
 * Replaces whatever the client sent in CLIENT_ADDRESS_HEADER with the address computed here, so
 * that everything behind this server (Next.js, the ingest fast path) can trust it.
 */
function setClientAddress(req: IncomingMessage, proxies: TrustedProxies): void {
  const name = CLIENT_ADDRESS_HEADER;
  delete req.headers[name];
  for (let i = req.rawHeaders.length - 2; i >= 0; i -= 2) {
    if (req.rawHeaders[i].toLowerCase() === name) req.rawHeaders.splice(i, 2);
  }
  const address = clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], proxies);
  if (address) {
    req.headers[name] = address;
    req.rawHeaders.push(name, address);
  }
}


/**
 * Each request's id (`x-request-id`, kept when a proxy in front sent a sane one), its time in
 * reconcile_http_request_seconds by route template, and one JSON log line when it ends: API
 * requests and scrapes at info, pages and assets at debug. Never a header's value: no token or
 * cookie reaches the log. `onEnd`: called once when it ends (the interactive-first count).
 */
function observe(req: IncomingMessage, res: ServerResponse, routeOf: RouteMatcher, scrape: boolean, onEnd?: () => void): RequestContext {
  const started = process.hrtime.bigint();
  const ctx: RequestContext = { id: requestIdFrom(req.headers["x-request-id"]) };
  res.setHeader("x-request-id", ctx.id);
  let done = false;
  // `finish` as the last byte is handed to the socket (`close` alone, for an aborted answer).
  const end = () => {
    if (done) return;
    done = true;
    onEnd?.();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const pathname = q === -1 ? url : url.slice(0, q);
    const route = scrape ? "/metrics (scrape)" : routeOf(pathname);
    const method = req.method ?? "GET";
    const status = res.statusCode;
    const m = metrics();
    m.httpSeconds.observe({ route, method: /^[A-Z]{1,10}$/.test(method) ? method : "other", status: String(status) }, seconds);
    if (INGEST_PATHS.has(route) && method === "POST") m.ingestSeconds.observe({ route }, seconds);
    const line = {
      request_id: ctx.id,
      method,
      route,
      path: pathname.length > 300 ? pathname.slice(0, 300) + "…" : pathname,
      status,
      duration_ms: Math.round(seconds * 1e4) / 10,
      principal_id: ctx.principalId ?? null,
      ...(res.writableFinished ? {} : { aborted: true }),
    };
    if (scrape || pathname.startsWith("/api/")) log().info(line, "request");
    else log().debug(line, "request");
  };
  res.once("finish", end);
  res.once("close", end);
  return ctx;
}

/** RECONCILE_METRICS_PORT: a port for GET /metrics without a token, on 127.0.0.1 only. */
function metricsPort(value: string | undefined): number | null {
  if (value === undefined || value === "") return null;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`RECONCILE_METRICS_PORT=${value} is not a port (1–65535)`);
  return n;
}

/** Settings that mean nothing: said to the operator as they are, without a stack trace. */
class SettingsRefused extends Error {}

async function main() {
  (process.env as Record<string, string>).NODE_ENV ??= "production";
  // A mistyped setting stops the start, naming every one, instead of running (or signing
  // checkpoints) on defaults nobody chose.
  const problems = settingProblems(process.env);
  const checked = <T>(parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (e) {
      problems.push(e instanceof Error ? e.message : String(e));
      return undefined;
    }
  };
  checked(() => parseCheckpointEvery(process.env.RECONCILE_CHECKPOINT_EVERY));
  checked(() => {
    const r = retentionSettings(process.env);
    if (r.archiveUrl) openTarget(r.archiveUrl);
  });
  const proxies = checked(() => parseTrustedProxies(process.env.RECONCILE_TRUSTED_PROXIES));
  problems.push(...(await import("@/lib/verdicts/target")).verdictTargetProblems(process.env));
  const scrapePort = checked(() => metricsPort(process.env.RECONCILE_METRICS_PORT));
  for (const r of parseSecretAllowlist(process.env.RECONCILE_VERIFIER_ENV).refused) problems.push(`RECONCILE_VERIFIER_ENV names ${r.name}: ${r.why}`);
  if (process.env.LOG_LEVEL && logLevel() !== process.env.LOG_LEVEL.trim().toLowerCase()) problems.push(`LOG_LEVEL=${process.env.LOG_LEVEL} is not one of fatal, error, warn, info, debug, trace, silent`);
  if (problems.length || !proxies) throw new SettingsRefused(`${problems.length === 1 ? "a setting means" : `${problems.length} settings mean`} nothing:\n  ${problems.join("\n  ")}`);
  const wantedChains = envSetting("RECONCILE_CHAINS");
  const port = envSetting("PORT");
  const hostname = process.env.HOSTNAME || undefined;
  const dir = path.resolve(import.meta.dirname, "../..");
  const app = next({ dev: false, dir, hostname, port });
  const handle = app.getRequestHandler();
  await app.prepare();
  trustClientAddressHeader();
  const { answeredUndecodablePath, handleIngestNode, isFastIngest } = await import("@/lib/api/ingest-node");
  const { handleLoopbackMetrics, handleMetricsNode, isPrometheusScrape } = await import("@/lib/api/metrics-node");
  (await import("@/lib/observability/health")).setAppDir(dir);
  // Route templates for the metrics' `route` label, from the build this server runs.
  const routeOf = routeMatcher(templatesOf(JSON.parse(readFileSync(path.join(dir, ".next/app-path-routes-manifest.json"), "utf8"))));
  const { setupCodeAtStart } = await import("@/lib/store/people/setup-code");
  const setupCode = await setupCodeAtStart(!isLoopbackHost(hostname));
  // The chain count is fixed when the database is first used, and recorded in it.
  const { defaultProjectReady, runProjects } = await import("@/lib/cli/project-runtime");
  const chains = await defaultProjectReady();
  if (chains !== wantedChains && process.env.RECONCILE_CHAINS) {
    console.warn(`RECONCILE_CHAINS=${process.env.RECONCILE_CHAINS} is ignored: this database was created with ${chains} hash chain${chains === 1 ? "" : "s"}, and that never changes`);
  }
  // Every project's own database, brought up to date as the default one was by `npm start` (lib/cli/projects.ts).
  await (await import("@/lib/cli/projects")).deployProjects((line) => console.log(line));
  const jobsOn = process.env.RECONCILE_JOBS !== "off";
  if (jobsOn) await (await import("@/lib/cli/job-handlers")).registerJobHandlers();
  const jobs = runProjects({ jobs: jobsOn, leaseMs: envSetting("RECONCILE_JOB_LEASE_MS"), log: (line) => console.error(line) });
  const server = createServer((req, res) => {
    setClientAddress(req, proxies);
    const scrape = isPrometheusScrape(req);
    // A store call that did not choose a project fails instead of reading the default project's (project-context.ts).
    // Ingest yields to the requests a person waits on (lib/store/db/priority.ts) until they end.
    const ended = isInteractive(req.method, req.url) ? interactiveBegin() : undefined;
    withRequest(observe(req, res, routeOf, scrape, ended), () => requestRequiresProject(() => {
      if (answeredUndecodablePath(req, res)) return;
      if (isFastIngest(req)) void handleIngestNode(req, res);
      else if (scrape) void handleMetricsNode(req, res);
      else void handle(req, res);
    }));
  });
  const scrapeServer = scrapePort ? createServer((req, res) => void handleLoopbackMetrics(req, res)) : null;
  scrapeServer?.listen(scrapePort!, "127.0.0.1", () => console.log(`Metrics for Prometheus on http://127.0.0.1:${scrapePort}/metrics (this machine only)`));
  // `next start --keepAliveTimeout`: how long an idle keep-alive connection is kept (Node: 5 s).
  server.keepAliveTimeout = envSetting("KEEP_ALIVE_TIMEOUT_MS");
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      server.close();
      scrapeServer?.close();
      void Promise.all([app.close(), jobs?.stop()]).finally(() => process.exit(0));
      setTimeout(() => process.exit(0), 3000).unref();
    });
  }
  server.listen(port, hostname, () => {
    console.log(`Reconcile is listening on http://${hostname ?? "localhost"}:${port}${chains > 1 ? ` (${chains} hash chains)` : ""}`);
    if (setupCode) {
      console.log(`No user exists yet, and this server is reachable from other machines: /setup asks for this one-time setup code.`);
      console.log(`Setup code: ${setupCode}`);
    }
  });
}

main().catch((e) => {
  console.error(`could not start: ${e instanceof SettingsRefused ? e.message : e instanceof Error ? e.stack : e}`);
  process.exit(1);
});
