import "server-only";
import { NextResponse } from "next/server";
import { can, type Permission, type Principal } from "@/lib/auth/permissions";
import { authenticateToken } from "@/lib/store/api-tokens";
import { ApiError } from "./errors";

type Handler<P> = (ctx: { req: Request; principal: Principal; params: P }) => Promise<Response>;

/**
 * The one wrapper every /api/v1 route goes through: authenticate (bearer token; session
 * cookies join with sign-in), check the permission, run the handler, map every error to the
 * one JSON shape. No route can forget a check, and no internals leak on a 500.
 */
export function apiRoute<P = Record<string, never>>(permission: Permission, handler: Handler<P>) {
  return async (req: Request, context: { params: Promise<P> }): Promise<Response> => {
    try {
      const principal = await authenticate(req);
      if (!principal) {
        throw new ApiError("unauthenticated", "sign in, or send Authorization: Bearer <token>");
      }
      if (!can(principal, permission)) {
        throw new ApiError("forbidden", `this ${principal.kind === "token" ? "token" : "account"} may not ${permission.replace(":", " ")}`, {
          permission,
        });
      }
      return await handler({ req, principal, params: await context.params });
    } catch (e) {
      return errorResponse(e);
    }
  };
}

export async function authenticate(req: Request): Promise<Principal | null> {
  const header = req.headers.get("authorization");
  if (header) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return m ? authenticateToken(m[1]) : null;
  }
  return null;
}

export function errorResponse(e: unknown): Response {
  if (e instanceof ApiError) {
    const headers: Record<string, string> = {};
    if (e.status === 401) headers["www-authenticate"] = 'Bearer realm="reconcile"';
    return NextResponse.json(e.toJSON(), { status: e.status, headers });
  }
  console.error("unhandled error in an API route:", e);
  return NextResponse.json(new ApiError("internal", "something went wrong on our side; it has been logged").toJSON(), { status: 500 });
}

export function json(body: unknown, status = 200): Response {
  return NextResponse.json(body, { status });
}
