import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";

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
  const pub = key.type === "public" ? key : createPublicKey(key);
  return `ed25519:${pub.export({ format: "der", type: "spki" }).toString("base64")}`;
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

/** True when the signature is valid for the key the checkpoint names. Which key that is, is another question: see pinnedKeyProblem. */
export function checkpointSignatureValid(c: Checkpoint): boolean {
  try {
    return verify(null, Buffer.from(signedText(c)), publicKeyObject(c.key), Buffer.from(c.signature, "base64"));
  } catch {
    return false;
  }
}

function publicKeyObject(keyText: string): KeyObject {
  if (!keyText.startsWith("ed25519:")) throw new Error("not an ed25519: key");
  const key = createPublicKey({ key: Buffer.from(keyText.slice("ed25519:".length), "base64"), format: "der", type: "spki" });
  if (key.asymmetricKeyType !== "ed25519") throw new Error("not an Ed25519 key");
  return key;
}

/**
 * A public key's fingerprint: `sha256:` and the lowercase hex SHA-256 of its SPKI DER (the
 * bytes behind `ed25519:…`). The audit page and `audit:verify` show the same; with openssl:
 * `openssl pkey -pubin -in key.pem -outform DER | sha256sum`.
 */
export function keyFingerprint(keyText: string): string {
  try {
    const der = publicKeyObject(keyText).export({ format: "der", type: "spki" });
    return `sha256:${createHash("sha256").update(der).digest("hex")}`;
  } catch {
    return "(an unreadable key)";
  }
}

/**
 * The `ed25519:…` text of a key given as a PEM public key (`-----BEGIN PUBLIC KEY-----`), a PEM
 * private key (its public half), or the `ed25519:…` line the audit page and checkpoints show.
 * Throws with a reason for anything else.
 */
export function publicKeyFromText(text: string): string {
  const t = text.trim();
  if (t.startsWith("ed25519:")) return publicKeyText(publicKeyObject(t));
  if (!t.startsWith("-----BEGIN")) throw new Error("expected a PEM public key (-----BEGIN PUBLIC KEY-----) or an ed25519:… line");
  const key = t.includes("PRIVATE KEY") ? createPublicKey(createPrivateKey(t)) : createPublicKey(t);
  if (key.asymmetricKeyType !== "ed25519") throw new Error(`expected an Ed25519 key, not ${key.asymmetricKeyType}`);
  return publicKeyText(key);
}

export function publicKeyPem(keyText: string): string {
  return publicKeyObject(keyText).export({ format: "pem", type: "spki" }).toString();
}

/** Why a checkpoint does not count against the pinned key (null: it does, or nothing is pinned). */
export function pinnedKeyProblem(c: Checkpoint, pinned: string | undefined): string | null {
  if (!pinned) return null;
  const signer = keyFingerprint(c.key);
  const expected = keyFingerprint(pinned);
  return signer === expected ? null : `the checkpoint at size ${c.size} is signed by key ${signer}, not by the pinned key ${expected}`;
}

/** Default of RECONCILE_CHECKPOINT_EVERY: a checkpoint at least every 10,000 records… */
export const CHECKPOINT_EVERY_RECORDS = 10_000;
/** …and at least hourly while records keep arriving. */
export const CHECKPOINT_EVERY_MS = 60 * 60 * 1000;

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000 } as const;

/**
 * RECONCILE_CHECKPOINT_EVERY: `N` (records), `N` with a unit `s`, `m` or `h` (time), or both
 * separated by a comma ("10000,15m"): a checkpoint is signed when either is reached since the
 * last one. A part left out keeps its default (10,000 records, 1 hour). Unset or empty: both
 * defaults. Anything else throws with a reason (the server refuses to start).
 */
export function parseCheckpointEvery(text: string | undefined): { records: number; ms: number } {
  const out = { records: CHECKPOINT_EVERY_RECORDS, ms: CHECKPOINT_EVERY_MS };
  if (!text?.trim()) return out;
  const seen = new Set<string>();
  for (const part of text.split(",").map((p) => p.trim())) {
    const m = /^([1-9][0-9]{0,8})([smh]?)$/.exec(part);
    if (!m) throw new Error(`RECONCILE_CHECKPOINT_EVERY: "${part}" is neither a number of records (e.g. 10000) nor a time (e.g. 90s, 15m, 2h)`);
    const kind = m[2] ? "time" : "records";
    if (seen.has(kind)) throw new Error(`RECONCILE_CHECKPOINT_EVERY: give at most one number of records and one time, not two ${kind === "time" ? "times" : "numbers of records"}`);
    seen.add(kind);
    if (m[2]) out.ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
    else out.records = Number(m[1]);
  }
  return out;
}

export function newSigningKey(): string {
  return generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString();
}

export function loadSigningKey(pem: string): KeyObject {
  return createPrivateKey(pem);
}
