import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Secrets the server must send or sign with itself (a webhook's signing key, a verifier's stored
 * credential) cannot be kept as hashes. They are stored encrypted (AES-256-GCM) under a key
 * derived (HKDF-SHA256) from the server's AUTH_SECRET, one key per purpose: a copy of the
 * database alone reveals none of them. The text is `v1.<iv>.<tag>.<ciphertext>`, base64url.
 */

const keys = new Map<string, Buffer>();
function boxKey(serverSecret: string, purpose: string): Buffer {
  if (!serverSecret) throw new Error("stored secrets need AUTH_SECRET (npm start creates one)");
  const id = `${purpose}\0${serverSecret}`;
  let key = keys.get(id);
  if (!key) {
    if (keys.size > 16) keys.clear();
    key = Buffer.from(hkdfSync("sha256", serverSecret, "reconcile", purpose, 32));
    keys.set(id, key);
  }
  return key;
}

export function sealText(text: string, serverSecret: string, purpose: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", boxKey(serverSecret, purpose), iv);
  const sealed = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), sealed.toString("base64url")].join(".");
}

export function openText(sealed: string, serverSecret: string, purpose: string): string {
  const [v, iv, tag, text] = sealed.split(".");
  if (v !== "v1" || !iv || !tag || text === undefined) throw new Error("a stored secret is not in a known form");
  const decipher = createDecipheriv("aes-256-gcm", boxKey(serverSecret, purpose), Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(text, "base64url")), decipher.final()]).toString("utf8");
}
