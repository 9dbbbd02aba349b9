import { headsRoot, headsSize, type ChainHead } from "./chains";
import { GENESIS_HASH } from "./hash";
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
export type Checkpoint = { size: number; head: string; time: string; key: string; signature: string; heads?: ChainHead[] };

/*
 * With several chains (lib/domain/chains.ts) a checkpoint is version 2: `head` is the Merkle
 * root of every chain's head and `size` the records of all chains together; each chain's head
 * follows the signature, one line each, bound to the signature by the root:
 *
 *   reconcile-checkpoint v2
 *   chains: 4
 *   size: 12345
 *   head: <Merkle root of the heads>
 *   time: 2026-11-30T12:00:00.000Z
 *   key: ed25519:…
 *   signature: …                    (over the first five lines joined by "\n", with a final "\n")
 *   chain 0: 12341 3086 9f86d081…     (chain, its last seq, how many records it holds, that record's hash;
 *                                      0 0 and the genesis hash when empty)
 *   …
 */

export function signedText(c: Pick<Checkpoint, "size" | "head" | "time" | "heads">): string {
  if (c.heads) return `reconcile-checkpoint v2\nchains: ${c.heads.length}\nsize: ${c.size}\nhead: ${c.head}\ntime: ${c.time}\n`;
  return `reconcile-checkpoint v1\nsize: ${c.size}\nhead: ${c.head}\ntime: ${c.time}\n`;
}

export function publicKeyText(key: KeyObject): string {
  const pub = key.type === "public" ? key : createPublicKey(key);
  return `ed25519:${pub.export({ format: "der", type: "spki" }).toString("base64")}`;
}

export function createCheckpoint(privateKey: KeyObject, size: number, head: string, time = new Date().toISOString()): Checkpoint {
  const signature = sign(null, Buffer.from(signedText({ size, head, time })), privateKey).toString("base64");
  return { size, head, time, key: publicKeyText(privateKey), signature };
}

/** A version 2 checkpoint of several chains' heads (in chain order): signs their Merkle root and total size. */
export function createChainsCheckpoint(privateKey: KeyObject, heads: ChainHead[], time = new Date().toISOString()): Checkpoint {
  const size = headsSize(heads);
  const head = headsRoot(heads);
  const signature = sign(null, Buffer.from(signedText({ size, head, time, heads })), privateKey).toString("base64");
  return { size, head, time, key: publicKeyText(privateKey), signature, heads };
}

export function formatCheckpoint(c: Checkpoint): string {
  const heads = c.heads ? c.heads.map((h, i) => `chain ${i}: ${h.seq} ${h.records} ${h.hash}\n`).join("") : "";
  return `${signedText(c)}key: ${c.key}\nsignature: ${c.signature}\n${heads}`;
}

export function parseCheckpoint(text: string): Checkpoint | null {
  const t = text.replace(/\r\n/g, "\n").trim() + "\n";
  const m = /^reconcile-checkpoint v1\nsize: (\d+)\nhead: ([0-9a-f]{64})\ntime: (\S+)\nkey: (ed25519:[A-Za-z0-9+/=]+)\nsignature: ([A-Za-z0-9+/=]+)\n?$/.exec(t);
  if (m) return { size: Number(m[1]), head: m[2], time: m[3], key: m[4], signature: m[5] };
  const v2 = /^reconcile-checkpoint v2\nchains: ([1-9]\d{0,2})\nsize: (\d+)\nhead: ([0-9a-f]{64})\ntime: (\S+)\nkey: (ed25519:[A-Za-z0-9+/=]+)\nsignature: ([A-Za-z0-9+/=]+)\n((?:chain \d+: \d+ \d+ [0-9a-f]{64}\n)*)$/.exec(t);
  if (!v2) return null;
  const heads = [...v2[7].matchAll(/chain (\d+): (\d+) (\d+) ([0-9a-f]{64})\n/g)].map((h) => ({ chain: Number(h[1]), seq: Number(h[2]), records: Number(h[3]), hash: h[4] }));
  const n = Number(v2[1]);
  if (heads.length !== n || heads.some((h, i) => h.chain !== i)) return null;
  return { size: Number(v2[2]), head: v2[3], time: v2[4], key: v2[5], signature: v2[6], heads: heads.map(({ seq, records, hash }) => ({ seq, hash, records })) };
}

/**
 * Why a version 2 checkpoint's heads do not add up (null: they do, or it is version 1): the
 * signature covers the root and the size, so the heads listed must give exactly those.
 */
export function headsProblem(c: Checkpoint): string | null {
  if (!c.heads) return null;
  for (const [i, h] of c.heads.entries()) {
    const empty = h.seq === 0;
    if (empty ? h.hash !== GENESIS_HASH || h.records !== 0 : !Number.isSafeInteger(h.seq) || h.seq < 1 || !Number.isSafeInteger(h.records) || h.records < 1 || h.records > h.seq) {
      return `the checkpoint's head of chain ${i} (seq ${h.seq}, ${h.records} records) is not a possible head`;
    }
  }
  if (headsRoot(c.heads) !== c.head) return `the checkpoint's chain heads do not give its signed root ${c.head}`;
  if (headsSize(c.heads) !== c.size) return `the checkpoint's chain heads cover ${headsSize(c.heads)} records, not the ${c.size} it signs`;
  return null;
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

/** The seqs whose hashes a verification must note to check this checkpoint: its size, or each chain's head. */
export function checkpointSeqs(c: Checkpoint): number[] {
  return c.heads ? c.heads.map((h) => h.seq).filter((s) => s > 0) : [c.size];
}
