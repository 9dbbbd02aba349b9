import "server-only";
import type { IncomingMessage, ServerResponse } from "node:http";
import { notePrincipal } from "@/lib/observability/context";
import { PROMETHEUS_CONTENT_TYPE, scrape } from "@/lib/observability/scrape";
import { authorize, bearerPrincipal } from "./authorize";
import { inInstance } from "@/lib/store/db/project-context";
import { discardNode } from "./body";
import { ApiError, errorAnswer, unauthenticated } from "./errors";
import { headersOf, send, SECURITY_HEADERS } from "./ingest-node";

export const METRICS_PATH = "/metrics";

/**
 * GET /metrics for Prometheus (docs/API.md "Server metrics and health"), answered by the production server
 * (lib/cli/serve.ts) before Next.js: the same path is the Metrics page for people, so a request
 * there carrying an Authorization header is a scrape, and one without is the page (a browser
 * sends its session cookie, never a bearer token). The query string is ignored: there is one
 * answer, every metric.
 */
export function isPrometheusScrape(req: IncomingMessage): boolean {
  if (!req.headers.authorization || !req.url) return false;
  const q = req.url.indexOf("?");
  return (q === -1 ? req.url : req.url.slice(0, q)) === METRICS_PATH;
}

/** A token with the `metrics` scope (its owner still an admin), checked as every API route checks: a refusal is a security event. */
export async function handleMetricsNode(req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    await discardNode(req);
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD");
      throw new ApiError("method_not_allowed", `${METRICS_PATH} takes GET or HEAD, not ${req.method}`);
    }
    const principal = await bearerPrincipal(req.headers.authorization ?? "");
    if (!principal) throw unauthenticated(req.headers.authorization);
    notePrincipal(principal.userId);
    const text = await inInstance(async () => {
      await authorize(principal, "server:metrics", { method: req.method ?? "GET", path: METRICS_PATH, headers: headersOf(req) });
      return scrape();
    });
    if (res.headersSent || res.destroyed) return;
    res.writeHead(200, { ...SECURITY_HEADERS, "content-type": PROMETHEUS_CONTENT_TYPE, "content-length": Buffer.byteLength(text), "cache-control": "no-store" });
    res.end(req.method === "HEAD" ? undefined : text);
  } catch (e) {
    const { status, body, headers } = errorAnswer(e);
    send(res, status, body, headers);
  }
}

/** The same metrics without a token, for RECONCILE_METRICS_PORT's loopback-only listener (any other path: 404). */
export async function handleLoopbackMetrics(req: IncomingMessage, res: ServerResponse): Promise<void> {
  await discardNode(req);
  const path = (req.url ?? "/").split("?")[0];
  if (path !== METRICS_PATH || (req.method !== "GET" && req.method !== "HEAD")) {
    res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
    res.end("only GET /metrics here\n");
    return;
  }
  try {
    const text = await inInstance(() => scrape());
    res.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE, "content-length": Buffer.byteLength(text) });
    res.end(req.method === "HEAD" ? undefined : text);
  } catch {
    res.writeHead(503, { "content-type": "text/plain; charset=utf-8" });
    res.end("the database could not be read\n");
  }
}
