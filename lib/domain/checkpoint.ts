import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";

/**
 * Signed checkpoints: the chain's size and head hash, signed with Ed25519, in a plain-text
 * format anyone can read and check with standard tools. Kept somewhere else (a ticket, a mail,
 * another system), a checkpoint lets `audit:verify --checkpoint` detect a truncated chain or
 * a rewritten tail, which the chain alone cannot: a forger who rewrites from record N onward
 * can recompute every later hash.
 *
 *   reconcile-checkpoint v1
 *   size: 12345
 *   head: 9f86d081…
 *   time: 2026-11-30T12:00:00.000Z
 *   key: ed25519:MCowBQYDK2VwAyEA…   (SPKI DER, base64)
 *   signature: 3f1c…                  (base64, over the first four lines joined by "\n", with a final "\n")
 */
export type Checkpoint = { size: number; head: string; time: string; key: string; signature: string };

const HEADER = "reconcile-checkpoint v1";

export function signedText(c: Pick<Checkpoint, "size" | "head" | "time">): string {
  return `${HEADER}\nsize: ${c.size}\nhead: ${c.head}\ntime: ${c.time}\n`;
}

export function publicKeyText(key: KeyObject): string {
  return `ed25519:${createPublicKey(key).export({ format: "der", type: "spki" }).toString("base64")}`;
}

export function createCheckpoint(privateKey: KeyObject, size: number, head: string, time = new Date().toISOString()): Checkpoint {
  const signature = sign(null, Buffer.from(signedText({ size, head, time })), privateKey).toString("base64");
  return { size, head, time, key: publicKeyText(privateKey), signature };
}

export function formatCheckpoint(c: Checkpoint): string {
  return `${signedText(c)}key: ${c.key}\nsignature: ${c.signature}\n`;
}

export function parseCheckpoint(text: string): Checkpoint | null {
  const m = /^reconcile-checkpoint v1\nsize: (\d+)\nhead: ([0-9a-f]{64})\ntime: (\S+)\nkey: (ed25519:[A-Za-z0-9+/=]+)\nsignature: ([A-Za-z0-9+/=]+)\n?$/.exec(text.replace(/\r\n/g, "\n").trim() + "\n");
  if (!m) return null;
  return { size: Number(m[1]), head: m[2], time: m[3], key: m[4], signature: m[5] };
}

/** True when the signature is valid for the key the checkpoint names (and, if given, the expected key). */
export function checkpointSignatureValid(c: Checkpoint, expectedKey?: string): boolean {
  if (expectedKey && expectedKey !== c.key) return false;
  try {
    const key = createPublicKey({ key: Buffer.from(c.key.slice("ed25519:".length), "base64"), format: "der", type: "spki" });
    return verify(null, Buffer.from(signedText(c)), key, Buffer.from(c.signature, "base64"));
  } catch {
    return false;
  }
}

export function newSigningKey(): string {
  return generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString();
}

export function loadSigningKey(pem: string): KeyObject {
  return createPrivateKey(pem);
}
