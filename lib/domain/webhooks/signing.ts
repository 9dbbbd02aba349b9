import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";

/**
 * Standard Webhooks signing through the maintained `standardwebhooks` package (never a
 * hand-written HMAC), and the storage of endpoint secrets.
 */

/** A new endpoint secret: `whsec_` and 32 random bytes in base64 (what the package expects). */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The headers of one attempt. `id` is the message's id, the same on every retry and redelivery.
 * Several secrets (while one rotates: the new one first, then the one it replaced) give several
 * signatures, space-separated, as Standard Webhooks specifies: a receiver verifies with either.
 */
export function signedHeaders(secrets: string | readonly string[], id: string, at: Date, body: string): Record<string, string> {
  const all = typeof secrets === "string" ? [secrets] : secrets;
  if (!all.length) throw new Error("a webhook is signed with at least one secret");
  const signature = all.map((secret) => new Webhook(secret).sign(id, at, body)).join(" ");
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signature,
  };
}

/**
 * The server must sign, so it must keep the secret itself (an HMAC key cannot be stored as a
 * hash). It is stored encrypted (AES-256-GCM) under a key derived (HKDF-SHA256) from the
 * server's AUTH_SECRET: a copy of the database alone does not reveal it. The text is
 * `v1.<iv>.<tag>.<ciphertext>`, base64url.
 */
let derived: { from: string; key: Buffer } | null = null;
function boxKey(serverSecret: string): Buffer {
  if (!serverSecret) throw new Error("webhook secrets need AUTH_SECRET (npm start creates one)");
  if (derived?.from !== serverSecret) derived = { from: serverSecret, key: Buffer.from(hkdfSync("sha256", serverSecret, "reconcile", "webhook endpoint secrets v1", 32)) };
  return derived.key;
}

export function sealSecret(secret: string, serverSecret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", boxKey(serverSecret), iv);
  const text = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), text.toString("base64url")].join(".");
}

export function openSecret(sealed: string, serverSecret: string): string {
  const [v, iv, tag, text] = sealed.split(".");
  if (v !== "v1" || !iv || !tag || text === undefined) throw new Error("a stored webhook secret is not in a known form");
  const decipher = createDecipheriv("aes-256-gcm", boxKey(serverSecret), Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(text, "base64url")), decipher.final()]).toString("utf8");
}

/** What a list may show of a secret: its first characters, enough to tell two apart. */
export function secretHint(secret: string): string {
  return `${secret.slice(0, 10)}…`;
}
