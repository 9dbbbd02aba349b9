import "server-only";
import type { IncomingMessage, ServerResponse } from "node:http";
import { authorize, bearerPrincipal, INGEST_PERMISSIONS } from "./authorize";
import { inProject } from "@/lib/store/db/project-context";
import { discardNode, readJsonBodyNode } from "./body";
import { errorAnswer, unauthenticated, withRequestId } from "./errors";
import { ingestBody, MAX_REQUEST_BYTES } from "./ingest";
import { notePrincipal } from "@/lib/observability/context";

export const RECEIPTS_PATH = "/api/v1/receipts";

/**
 * The headers next.config.js gives every Next.js answer; the fast path answers with the same.
 * next.config.js is plain JavaScript and cannot import this list: ingest-parity.itest.ts fails
 * if the two drift apart.
 */
export const SECURITY_HEADERS: Record<string, string> = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=()",
  "x-frame-options": "DENY",
};

/**
 * Whether the production server (lib/cli/serve.ts) answers this request itself instead of
 * handing it to Next.js: POST /api/v1/receipts with a bearer token. Everything else (a session
 * cookie, another method, a trailing slash) goes to Next.js and its route handler.
 */
export function isFastIngest(req: IncomingMessage): boolean {
  if (req.method !== "POST" || !req.headers.authorization || !req.url) return false;
  const q = req.url.indexOf("?");
  return (q === -1 ? req.url : req.url.slice(0, q)) === RECEIPTS_PATH;
}

/**
 * A path that is not valid percent-encoded UTF-8 (`%FF`, `%zz`) is the client's mistake. The
 * proxy answers it with 400 for the paths it sees, but the ingest endpoints skip the proxy, and
 * Next.js's route matching then failed with a bare 500. The production server asks this first,
 * for every request: true when it has answered (400, in the API's error shape).
 */
export function answeredUndecodablePath(req: IncomingMessage, res: ServerResponse): boolean {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  try {
    decodeURIComponent(q === -1 ? url : url.slice(0, q));
    return false;
  } catch {
    // As the proxy answers it: JSON under /api/, plain text for a page.
    const message = "the request path is not valid percent-encoded UTF-8";
    void discardNode(req).then(() => {
      if (url.startsWith("/api/")) return send(res, 400, withRequestId({ error: { code: "invalid_request", message } }));
      if (res.headersSent || res.destroyed) return;
      res.writeHead(400, { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(message) });
      res.end(message);
    });
    return true;
  }
}

/**
 * POST /api/v1/receipts on Node's own request and response, with exactly the checks and answers
 * of the route handler (app/api/v1/receipts/route.ts): bearer authentication, the ingest
 * permission (a refusal is recorded), the body limits, then ingestBody. It exists because
 * Next.js's request handling costs about a millisecond a request on this machine, which capped
 * single-record ingest at ~700 requests/s (docs/BENCHMARKS.md).
 */
export async function handleIngestNode(req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const principal = await bearerPrincipal(req.headers.authorization ?? "");
    if (!principal) throw unauthenticated(req.headers.authorization);
    notePrincipal(principal.userId);
    // Into the token's project, as every route (lib/api/route.ts).
    await inProject(principal.project, async () => {
      await authorize(principal, INGEST_PERMISSIONS, { method: "POST", path: RECEIPTS_PATH, headers: headersOf(req) });
      const { value, bytes } = await readJsonBodyNode(req, MAX_REQUEST_BYTES);
      const result = await ingestBody(value, principal, bytes);
      send(res, result.status, result.body);
    });
  } catch (e) {
    if (!req.readableEnded && !req.isPaused()) await discardNode(req);
    // A body left unread (past the drain limit) ends the connection with the answer.
    const extra: Record<string, string> = req.readableEnded ? {} : { connection: "close" };
    const { status, body, headers } = errorAnswer(e);
    send(res, status, body, { ...extra, ...headers });
  }
}

export function send(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}) {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    ...extra,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** The request's headers as a Headers object, with the socket address as Next.js would add it. */
export function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  if (!headers.has("x-forwarded-for") && req.socket.remoteAddress) headers.set("x-forwarded-for", req.socket.remoteAddress);
  return headers;
}
