import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The request being answered, as the production server (lib/cli/serve.ts) starts it: its id
 * (sent back as `x-request-id`, and in every error answer as `request_id`) and, once a route
 * has authenticated it, the principal's id for the request's log line.
 *
 * On globalThis: route handlers run in Next.js's bundle, which has its own copies of the
 * modules, and must read the storage the server opened (as lib/jobs/worker.ts does).
 */
export type RequestContext = { id: string; principalId?: string };

const root = globalThis as unknown as { __reconcileRequests?: AsyncLocalStorage<RequestContext> };
const storage = (root.__reconcileRequests ??= new AsyncLocalStorage<RequestContext>());

export function withRequest<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}

/** Who the current request turned out to be (a user's id, never a token or a secret). */
export function notePrincipal(id: string): void {
  const ctx = storage.getStore();
  if (ctx) ctx.principalId = id;
}

/**
 * The id a client or a proxy in front sent (`x-request-id`), when it is a plain short token;
 * otherwise a new one. A hostile value (long, spaces, control characters) is replaced, never
 * logged or echoed.
 */
export function requestIdFrom(sent: string | string[] | undefined): string {
  if (typeof sent === "string" && /^[A-Za-z0-9._:-]{8,64}$/.test(sent)) return sent;
  return crypto.randomUUID();
}
