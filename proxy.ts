import { NextResponse, type NextRequest } from "next/server";
import { safeRedirectPath } from "@/lib/auth/redirect";
import { PROJECT_HEADER } from "@/lib/auth/project-header";
import { isProjectPage, unprojectedPath } from "@/lib/domain/projects";

/**
 * The proxy only does these things, none of them security decisions about who may do what
 * (every page, route handler and server action checks that itself):
 * 1. answers 400 to a path that is not valid percent-encoding;
 * 2. sends a visitor without a session cookie to /login (a convenience, not a gate);
 * 3. routes a project's URLs: `/p/{slug}/…` goes to the page (or API route) `/…` with the slug in
 *    PROJECT_HEADER; a project page's URL from before projects (`/operations/…`) is redirected to
 *    the default project's. Next.js runs the proxy again on the rewritten path, which then
 *    carries the header and is left as it is. A client that sends the header itself only picks
 *    among the projects it may open: every reader of it checks the user's role in that project,
 *    and a token's project is its own whatever the header says (lib/api/route.ts);
 * 4. sets a per-request Content-Security-Policy with a nonce that Next.js puts on its scripts.
 */
const PUBLIC = ["/login", "/setup", "/forbidden", "/api/", "/_next/", "/favicon"];

function csp(nonce: string): string {
  const dev = process.env.NODE_ENV !== "production";
  const issuer = process.env.AUTH_OIDC_ISSUER ? ` ${new URL(process.env.AUTH_OIDC_ISSUER).origin}` : "";
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self'${dev ? " ws:" : ""}`,
    "object-src 'none'",
    "base-uri 'self'",
    `form-action 'self'${issuer}`,
    "frame-ancestors 'none'",
  ].join("; ");
}

export function proxy(request: NextRequest) {
  // A path that is not valid percent-encoding (`%FF`, `%zz`) would fail later, inside Next.js's
  // route matching, as a bare 500: answer the client's mistake here.
  try {
    decodeURIComponent(request.nextUrl.pathname);
  } catch {
    const message = "the request path is not valid percent-encoded UTF-8";
    return request.nextUrl.pathname.startsWith("/api/")
      ? NextResponse.json({ error: { code: "invalid_request", message } }, { status: 400 })
      : new NextResponse(message, { status: 400, headers: { "content-type": "text/plain; charset=utf-8" } });
  }
  const nonce = Buffer.from(crypto.randomUUID()).toString("base64");
  const policy = csp(nonce);
  const { pathname, search } = request.nextUrl;
  const inProject = unprojectedPath(pathname);
  const hasSession = request.cookies.getAll().some((c) => c.name.endsWith("authjs.session-token"));
  // A project's API path (`/p/{slug}/api/…`) answers for itself, as /api/ does.
  const inner = inProject?.path ?? pathname;
  if (!hasSession && !PUBLIC.some((p) => inner.startsWith(p))) {
    const url = request.nextUrl.clone();
    url.pathname = "/login";
    // The way back, only as a path on this origin (a request for `//evil.example` gets none).
    const from = safeRedirectPath(pathname + search);
    url.search = from === "/" ? "" : `?from=${encodeURIComponent(from)}`;
    return NextResponse.redirect(url);
  }
  const routed = request.headers.has(PROJECT_HEADER);
  if (!inProject && !routed && isProjectPage(pathname) && (request.method === "GET" || request.method === "HEAD")) {
    const url = request.nextUrl.clone();
    url.pathname = pathname === "/" ? "/p/default" : `/p/default${pathname}`;
    return NextResponse.redirect(url, 308);
  }
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("x-nonce", nonce);
  requestHeaders.set("content-security-policy", policy);
  let response: NextResponse;
  if (inProject) {
    requestHeaders.set(PROJECT_HEADER, inProject.slug);
    const url = request.nextUrl.clone();
    url.pathname = inProject.path;
    // Next.js's own fetch of the page a server action redirected to (sign-in's: it carries the
    // action's answer headers, `x-action-redirect` among them, which no browser sends) asks with
    // an empty `_rsc`. The proxy gets the URL without it, and Next.js carries only a non-empty
    // one over to a rewrite: the page's RSC hash check then answered 307 to the unprefixed path,
    // which is redirected back here, and so on ("redirect count exceeded"), and the browser
    // loaded the whole page again. Put the empty one back (e2e/projects.spec.ts holds the
    // sign-in to one request).
    if (request.headers.has("x-action-redirect")) url.searchParams.set("_rsc", "");
    response = NextResponse.rewrite(url, { request: { headers: requestHeaders } });
  } else {
    response = NextResponse.next({ request: { headers: requestHeaders } });
  }
  response.headers.set("content-security-policy", policy);
  return response;
}

/**
 * Not for static assets, and not for the ingest endpoints: they answer machines (nothing to
 * redirect, no page to put a CSP on); skipping the proxy is +20 % single-record throughput
 * (bench:ingest, docs/BENCHMARKS.md); and Next.js hands a request through the proxy with its
 * body cut at 10 MB (`proxyClientMaxBodySize`), which turned a 13 MiB OTLP export (16 MiB are
 * allowed) into a truncated, undecodable one. Odd paths under them get Next.js's 404.
 */
export const config = {
  matcher: [{ source: "/((?!_next/static|_next/image|favicon.ico|api/v1/receipts|api/v1/otlp/).*)" }],
};
