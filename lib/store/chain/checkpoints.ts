import "server-only";
import { perProject } from "../db/project-context";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { KeyObject } from "node:crypto";
import { headsSize } from "@/lib/domain/chains";
import { createChainsCheckpoint, createCheckpoint, loadSigningKey, newSigningKey, parseCheckpointEvery, publicKeyText, type Checkpoint } from "@/lib/domain/checkpoint";
import { chainHead } from "./audit-export";
import { chainCountIn, committedHeads, lockChain } from "./chain";
import { reader, writeTransaction } from "../db/db";
import { announceCheckpoint } from "../work/webhook-outbox";

/** How often a checkpoint is due: RECONCILE_CHECKPOINT_EVERY (see parseCheckpointEvery), read once. */
let every: { records: number; ms: number } | null = null;
export function checkpointEvery(): { records: number; ms: number } {
  return (every ??= parseCheckpointEvery(process.env.RECONCILE_CHECKPOINT_EVERY));
}

let key: KeyObject | null = null;

/**
 * The Ed25519 signing key: RECONCILE_CHECKPOINT_KEY (PEM) when given, else the file named by
 * CHECKPOINT_KEY_FILE (default ./data/checkpoint-ed25519.pem), created at first use.
 */
export function signingKey(): KeyObject {
  if (key) return key;
  if (process.env.RECONCILE_CHECKPOINT_KEY) return (key = loadSigningKey(process.env.RECONCILE_CHECKPOINT_KEY));
  const file = process.env.CHECKPOINT_KEY_FILE || path.join("data", "checkpoint-ed25519.pem");
  if (!existsSync(/* turbopackIgnore: true */ file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      writeFileSync(file, newSigningKey(), { mode: 0o600, flag: "wx" });
      chmodSync(file, 0o600);
    } catch (e) {
      // Another process created it first: use theirs.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
  return (key = loadSigningKey(readFileSync(/* turbopackIgnore: true */ file, "utf8")));
}

export function checkpointPublicKey(): string {
  return publicKeyText(signingKey());
}

type Row = { size: number; head: string; time: string; key: string; signature: string; heads: string | null };
const toCheckpoint = (r: Row): Checkpoint => ({
  size: r.size,
  head: r.head,
  time: r.time,
  key: r.key,
  signature: r.signature,
  ...(r.heads ? { heads: (JSON.parse(r.heads) as [number, number, string][]).map(([seq, records, hash]) => ({ seq, hash, records })) } : {}),
});
const toRow = (c: Checkpoint): Omit<Row, "heads"> & { heads?: string } => ({
  size: c.size,
  head: c.head,
  time: c.time,
  key: c.key,
  signature: c.signature,
  ...(c.heads ? { heads: JSON.stringify(c.heads.map((h) => [h.seq, h.records, h.hash])) } : {}),
});

export async function latestCheckpoint(): Promise<Checkpoint | null> {
  const db = await reader();
  const row = await db.checkpoint.findFirst({ orderBy: { size: "desc" } });
  return row ? toCheckpoint(row) : null;
}

export async function allCheckpoints(): Promise<Checkpoint[]> {
  const db = await reader();
  return (await db.checkpoint.findMany({ orderBy: { size: "asc" } })).map(toCheckpoint);
}

/** Signs the current head, unless the latest checkpoint already covers it. */
export async function writeCheckpoint(): Promise<Checkpoint | null> {
  const signer = signingKey();
  return writeTransaction(async (tx) => {
    // Every chain's lock: the heads signed are the heads at commit.
    await lockChain(tx, "all");
    const n = await chainCountIn(tx);
    let c: Checkpoint;
    const last = await tx.checkpoint.findFirst({ orderBy: { size: "desc" } });
    if (n > 1) {
      const heads = await committedHeads(tx, n);
      const size = headsSize(heads);
      if (size === 0 || (last && last.size >= size)) return null;
      c = createChainsCheckpoint(signer, heads);
    } else {
      const head = await tx.chainRecord.findFirst({ orderBy: { seq: "desc" }, select: { seq: true, hash: true } });
      if (!head) return null;
      if (last && last.size >= head.seq) return null;
      c = createCheckpoint(signer, head.seq, head.hash);
    }
    await tx.checkpoint.create({ data: toRow(c) });
    await announceCheckpoint(tx, c);
    return c;
  });
}

/** Each project signs its own chain's checkpoints, on its own clock (project-context.ts). */
const scheduled = perProject("checkpoint-schedule", () => ({ checkedAt: 0 }) as { checkedAt: number; timer?: NodeJS.Timeout });

/**
 * Called after writes (and by a timer): signs a checkpoint when RECONCILE_CHECKPOINT_EVERY
 * records or time (default 10,000 records, an hour) have passed since the last one. Cheap when
 * nothing is due (looks at most every 2 s); never fails the write that called it.
 */
export async function maybeCheckpoint(force = false): Promise<void> {
  const s = scheduled();
  let due: { records: number; ms: number };
  try {
    due = checkpointEvery();
  } catch (e) {
    // The server checks this at start (lib/cli/serve.ts); here it must not fail a write.
    console.error(e instanceof Error ? e.message : e);
    return;
  }
  if (!s.timer) {
    s.timer = setInterval(() => void maybeCheckpoint(true), Math.max(1000, Math.min(5 * 60 * 1000, due.ms)));
    s.timer.unref();
  }
  if (!force && Date.now() - s.checkedAt < 2_000) return;
  s.checkedAt = Date.now();
  try {
    const db = await reader();
    const [head, last] = await Promise.all([chainHead(), db.checkpoint.findFirst({ orderBy: { size: "desc" }, select: { size: true, time: true } })]);
    if (!head) return;
    const size = head.records;
    const behind = size - (last?.size ?? 0);
    const age = last ? Date.now() - Date.parse(last.time) : Infinity;
    if (behind >= due.records || (behind > 0 && age >= due.ms)) await writeCheckpoint();
  } catch (e) {
    console.error("checkpoint failed (the chain itself is unaffected):", e);
  }
}
