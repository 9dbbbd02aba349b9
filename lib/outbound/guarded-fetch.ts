import "server-only";
import { guardedRequest, type OutboundPolicy } from "./guarded-request";

/**
 * The guarded client as a `fetch`, for a vendor's client that takes a custom fetch (the Phoenix
 * client's `fetch` option): every request it makes keeps the rules of guardedRequest (scheme,
 * host allowlist, the resolved address checked in the socket's own lookup, same-host redirects
 * only, one deadline, the answer's size cap). A refusal rejects the fetch with the OutboundRefused.
 */
export function guardedFetch(policy: OutboundPolicy): typeof fetch {
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const req = new Request(input, init);
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.text();
    const headers: Record<string, string> = {};
    req.headers.forEach((value, key) => {
      headers[key] = value;
    });
    const res = await guardedRequest({ method: req.method, url: req.url, headers, body: body || undefined }, policy);
    const noBody = res.status === 204 || res.status === 205 || res.status === 304;
    return new Response(noBody ? null : new Uint8Array(res.body), { status: res.status, headers: res.headers });
  };
}
