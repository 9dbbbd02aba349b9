import "server-only";
import { NextResponse } from "next/server";
import type { Permission, Principal } from "@/lib/domain/permissions";
import { currentPrincipal, currentUser, principalIn } from "@/lib/auth/session";
import { PROJECT_HEADER } from "@/lib/auth/project-header";
import { inProject } from "@/lib/store/db/project-context";
import { authorize, bearerPrincipal } from "./authorize";
import { discardUnreadBody } from "./body";
import { ApiError, errorAnswer, unauthenticated } from "./errors";
import { currentRequest, notePrincipal, requestIdFrom, withRequest } from "@/lib/observability/context";

type Handler<P> = (ctx: { req: Request; principal: Principal; params: P }) => Promise<Response>;

/**
 * The one wrapper every /api/v1 route goes through: authenticate (bearer token; session
 * cookies join with sign-in), check the permission, run the handler, map every error to the
 * one JSON shape. No route can forget a check, and no internals leak on a 500.
 */
export function apiRoute<P = Record<string, never>>(permission: Permission | readonly Permission[], handler: Handler<P>, opts: { projectParam?: keyof P & string } = {}) {
  return (req: Request, context: { params: Promise<P> }): Promise<Response> =>
    inRequest(req, async () => {
      try {
        // A route under /api/v1/projects/{slug}/… is about that project, whoever asks.
        const slug = opts.projectParam ? String((await context.params)[opts.projectParam]) : undefined;
        const principal = await authenticate(req, slug);
        if (!principal) {
          throw unauthenticated(req.headers.get("authorization"));
        }
        notePrincipal(principal.userId);
        if (principal.kind === "session" && !SAFE_METHODS.has(req.method) && !sameOrigin(req)) {
          throw new ApiError("forbidden", "cross-site request refused: send it from this site, or use a token");
        }
        // Everything from here on reads and writes the principal's project only (lib/store/db/project-context.ts).
        return await inProject(principal.project, async () => {
          await authorize(principal, permission, { method: req.method, path: new URL(req.url).pathname, headers: req.headers });
          const params = await context.params;
          // No stored id holds a NUL (PostgreSQL refuses NUL in text, and would answer the lookup
          // with an error): a path segment carrying one names nothing, for every route at once.
          for (const v of Object.values(params ?? {})) {
            if (typeof v === "string" && v.includes("\u0000")) throw new ApiError("not_found", "nothing has an id containing a NUL character");
          }
          return await handler({ req, principal, params });
        });
      } catch (e) {
        await discardUnreadBody(req);
        return errorResponse(e);
      }
    });
}

/**
 * Runs a route's work inside its request's context (lib/observability/context.ts). The
 * production server opens it for every request; under `next start` or `next dev` the route
 * opens one itself, so error answers carry a `request_id` and `x-request-id` there too.
 */
async function inRequest(req: Request, work: () => Promise<Response>): Promise<Response> {
  if (currentRequest()) return work();
  const ctx = { id: requestIdFrom(req.headers.get("x-request-id") ?? undefined) };
  const res = await withRequest(ctx, work);
  try {
    res.headers.set("x-request-id", ctx.id);
  } catch {
    // an immutable response (none is made here today): its body still carries the id
  }
  return res;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF protection for cookie-authenticated writes: the browser says where the request came
 * from (Origin, or Sec-Fetch-Site), and it must be this site. Token requests carry no cookie
 * and need no such check.
 */
function sameOrigin(req: Request): boolean {
  const site = req.headers.get("sec-fetch-site");
  if (site) return site === "same-origin";
  const origin = req.headers.get("origin");
  if (!origin) return false;
  const host = req.headers.get("x-forwarded-host") ?? req.headers.get("host");
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

/**
 * A bearer token when one is sent (a bad one is not silently replaced by a cookie), else the
 * session, in the request's project: a token's own (a `/p/{slug}/api/…` path naming another is
 * 404), or for a session the one its path names (proxy.ts), else the default project. Null when
 * nobody is signed in; 404 when the project does not exist for them (not a member, or no such
 * project: the two look the same).
 */
export async function authenticate(req: Request, slug?: string): Promise<Principal | null> {
  const header = req.headers.get("authorization");
  const named = slug ?? req.headers.get(PROJECT_HEADER);
  if (header) {
    const principal = await bearerPrincipal(header);
    if (principal && named !== null && named !== principal.project.slug) throw noSuchProject();
    return principal;
  }
  const user = await currentUser();
  const principal = user && named !== null ? await principalIn(user, named) : await currentPrincipal();
  if (!principal && user) throw noSuchProject();
  return principal;
}

const noSuchProject = () => new ApiError("not_found", "no such project");

export function errorResponse(e: unknown): Response {
  const { status, body, headers } = errorAnswer(e);
  return NextResponse.json(body, { status, headers });
}

export function json(body: unknown, status = 200): Response {
  return NextResponse.json(body, { status });
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
const METHODS: Method[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** Authenticates like every route, then answers `answer()`; errors in the one JSON shape. */
function signedInOnly(answer: (req: Request) => Response) {
  return (req: Request): Promise<Response> =>
    inRequest(req, async () => {
      let res: Response;
      try {
        if (!(await authenticate(req))) throw unauthenticated(req.headers.get("authorization"));
        res = answer(req);
      } catch (e) {
        res = errorResponse(e);
      }
      // Nothing here reads the body: drop it, so the client reads the answer instead of a reset.
      await discardUnreadBody(req);
      return res;
    });
}

/**
 * The methods a route does not take: 405 in the JSON error shape, with `Allow` (Next.js alone
 * answers them with an empty body), and OPTIONS saying what is allowed. Use as
 * `export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST")`.
 */
export function otherMethods<A extends Method>(...allowed: A[]) {
  const allow = allowed.flatMap((m) => (m === "GET" ? ["GET", "HEAD"] : [m])).join(", ");
  const refuse = signedInOnly((req) => {
    const res = errorResponse(new ApiError("method_not_allowed", `${new URL(req.url).pathname} takes ${allow.replace(/, (?=[^,]*$)/, " or ")}, not ${req.method}`));
    res.headers.set("allow", allow);
    return res;
  });
  const options = signedInOnly(() => new Response(null, { status: 204, headers: { allow: `${allow}, OPTIONS` } }));
  const handlers = Object.fromEntries(METHODS.filter((m) => !(allowed as Method[]).includes(m)).map((m) => [m, refuse]));
  return { ...handlers, OPTIONS: options } as Record<Exclude<Method, A>, typeof refuse> & { OPTIONS: typeof options };
}

/** Any other path under /api/v1: a JSON 404 (after authentication), not the HTML error page. */
export const unknownApiPath = signedInOnly((req) =>
  errorResponse(new ApiError("not_found", `no API endpoint at ${new URL(req.url).pathname}: see docs/API.md`)),
);
