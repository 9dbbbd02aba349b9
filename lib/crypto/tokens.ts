import { createHash, randomBytes } from "node:crypto";

/**
 * API tokens: a recognisable prefix (so secret scanners and people can tell what leaked),
 * 256 random bits, stored only as SHA-256, shown once, listed by prefix + last 4.
 */
export const TOKEN_PREFIX = "rcl_";
const TOKEN_RE = /^rcl_[A-Za-z0-9_-]{43}$/;

export function generateToken(): { token: string; hash: string; prefix: string; last4: string } {
  const token = TOKEN_PREFIX + randomBytes(32).toString("base64url");
  return { token, hash: hashToken(token), prefix: token.slice(0, 8), last4: token.slice(-4) };
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

export function looksLikeToken(value: string): boolean {
  return TOKEN_RE.test(value);
}
