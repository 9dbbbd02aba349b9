import { createHash } from "node:crypto";

/**
 * What a sign-in form's email field may hold, and how an identifier that names nobody is kept.
 * People type passwords into the email field: such text must never reach the audit chain or the
 * throttle table as typed, so it is kept only as a short SHA-256 digest (enough to tell repeated
 * attempts apart, and for an auditor to check a suspected identifier against).
 */
export { MAX_IDENTIFIER_LENGTH } from "@/lib/domain/identifier-limit";

/** The identifier as compared and digested: trimmed, lower-case (as emails are stored). */
export function normalizeIdentifier(input: string): string {
  return input.trim().toLowerCase();
}

/** `sha256:` + the first 16 hex digits of SHA-256 over the normalized identifier. */
export function identifierDigest(input: string): string {
  return "sha256:" + createHash("sha256").update(normalizeIdentifier(input), "utf8").digest("hex").slice(0, 16);
}
