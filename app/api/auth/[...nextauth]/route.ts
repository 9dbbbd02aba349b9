import type { NextRequest } from "next/server";
import { handlers } from "@/lib/auth/auth";

/**
 * Auth.js builds its URLs — the OpenID redirect_uri, where to go afterwards — from the request's
 * URL in these route handlers, but from the Host header (or X-Forwarded-Host) in server actions
 * (`signIn` from the sign-in page). The two differ when the browser uses 127.0.0.1 or [::1]:
 * Next.js's request URL turns those into `localhost`, so a single sign-on started at
 * http://127.0.0.1:3000 came back with another redirect_uri and the provider refused the code.
 * Here the route handlers see the address the browser used, exactly as the server actions do,
 * unless AUTH_URL names the public address (then Auth.js uses that everywhere). A plain Request:
 * a NextRequest would rename the host again.
 */
function asAddressed(req: NextRequest): NextRequest {
  if (process.env.AUTH_URL || process.env.NEXTAUTH_URL) return req;
  const host = req.headers.get("x-forwarded-host") ?? req.headers.get("host");
  if (!host) return req;
  const url = new URL(req.url);
  const proto = (req.headers.get("x-forwarded-proto") ?? url.protocol).replace(/:$/, "");
  let origin: string;
  try {
    origin = new URL(`${proto}://${host}`).origin;
  } catch {
    return req;
  }
  if (origin === url.origin) return req;
  const init: RequestInit & { duplex?: "half" } = { method: req.method, headers: req.headers, body: req.body, duplex: "half" };
  return new Request(origin + url.pathname + url.search, init) as NextRequest;
}

export const GET = (req: NextRequest) => handlers.GET(asAddressed(req));
export const POST = (req: NextRequest) => handlers.POST(asAddressed(req));
