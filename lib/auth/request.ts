import { CLIENT_ADDRESS_HEADER } from "./client-address";

/**
 * Set by the production server (lib/cli/serve.ts) in this process: it computes every request's
 * client address (socket, and X-Forwarded-For only as RECONCILE_TRUSTED_PROXIES allows) and
 * passes it in CLIENT_ADDRESS_HEADER after removing any copy the client sent. Under any other
 * server (`next dev`, plain `next start`) that header is whatever the client wrote, so it is not
 * read and the address is unknown (null): throttling then counts per account only.
 */
const MARK = Symbol.for("reconcile.clientAddressHeader");

export function trustClientAddressHeader(): void {
  (globalThis as Record<symbol, unknown>)[MARK] = true;
}

/** The client's address for throttling and the audit trail, or null when it is not known. */
export function sourceAddress(headers: Headers | undefined | null): string | null {
  if (!(globalThis as Record<symbol, unknown>)[MARK]) return null;
  return headers?.get(CLIENT_ADDRESS_HEADER)?.slice(0, 100) || null;
}
