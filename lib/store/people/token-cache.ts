import "server-only";
import type { Principal } from "@/lib/domain/permissions";

/**
 * Authenticated tokens are remembered for a few seconds so that a busy ingest client does not
 * pay a database round trip per request. Revoking a token or disabling a user in this process
 * forgets at once (forgetTokens); other instances see it within the TTL, well inside the 60 s
 * a disabled user's access may outlive the change. Its own module because both api-tokens.ts
 * (which fills it) and users.ts (which must empty it) need it.
 */
const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;
export type TokenPrincipal = Extract<Principal, { kind: "token" }>;
const cacheHolder = globalThis as unknown as { __reconcileTokenCache?: Map<string, { principal: TokenPrincipal; until: number }> };
const cache = (cacheHolder.__reconcileTokenCache ??= new Map());

/** The principal remembered for a token's hash, while it is fresh. */
export function rememberedToken(hash: string): TokenPrincipal | undefined {
  const hit = cache.get(hash);
  return hit && hit.until > Date.now() ? hit.principal : undefined;
}

export function rememberToken(hash: string, principal: TokenPrincipal): void {
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(hash, { principal, until: Date.now() + CACHE_TTL_MS });
}

export function forgetToken(hash: string): void {
  cache.delete(hash);
}

/** Forgets every token: after a revocation, or a change to a user's role or enabled flag. */
export function forgetTokens(): void {
  cache.clear();
}
