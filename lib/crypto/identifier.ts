import { createHmac } from "node:crypto";
import { serverSecret } from "./server-secret";

/**
 * What a sign-in form's email field may hold, and how an identifier that names nobody is kept.
 * People type passwords into the email field: such text must never reach the audit chain or the
 * throttle table as typed. It is kept only as a short keyed digest (issue 47): HMAC-SHA-256 under
 * a key derived from the server's secret (AUTH_SECRET), so equal inputs still match within one
 * instance (repeated attempts are told apart; an operator can check a suspected identifier with
 * `identifierDigest`), while someone who reads the trail or its export, without the secret,
 * cannot run a dictionary against it as they could against a plain SHA-256.
 */
export { MAX_IDENTIFIER_LENGTH } from "@/lib/domain/identifier-limit";

/** The identifier as compared and digested: trimmed, lower-case (as emails are stored). */
export function normalizeIdentifier(input: string): string {
  return input.trim().toLowerCase();
}

/** The digest's key: HMAC-SHA-256 of this purpose under `secret`, so the secret itself keys nothing else here. */
export function identifierKey(secret: string): Buffer {
  return createHmac("sha256", secret).update("reconcile identifier digest v1", "utf8").digest();
}

/** `hmac:` + the first 16 hex digits of HMAC-SHA-256 (identifierKey(secret)) over the normalized identifier. */
export function identifierDigest(input: string, secret = serverSecret()): string {
  return "hmac:" + createHmac("sha256", identifierKey(secret)).update(normalizeIdentifier(input), "utf8").digest("hex").slice(0, 16);
}
