import "server-only";
import { chainHash, GENESIS_HASH, type ChainFields, type ChainRecord } from "@/lib/domain/hash";
import { asSql, insertMany, type SqlLike } from "./sql";

export type ChainEntry = {
  kind: ChainFields["kind"];
  operation_id: string | null;
  actor: string | null;
  payload: unknown;
  /** Query columns for stage records; they repeat what the payload says. */
  stage?: string | null;
  observed_at?: string | null;
  /** canonicalJson(payload), when the caller already has it (see chainHash). */
  payloadCanonical?: string;
};

/**
 * Appends entries to the one audit chain inside the caller's transaction: takes the chain
 * lock, reads the head, assigns consecutive seqs and links each hash to the one before.
 * The caller's state change and these records commit or fail together.
 */
export async function appendToChain(
  db: SqlLike,
  entries: ChainEntry[],
  recordedAt = new Date().toISOString(),
  opts: { locked?: boolean; pace?: () => Promise<void> } = {},
): Promise<ChainRecord[]> {
  if (entries.length === 0) return [];
  const tx = asSql(db);
  if (!opts.locked) await lockChain(tx);
  const [head] = await tx.all<{ seq: number | bigint; hash: string }>("SELECT seq, hash FROM chain_records ORDER BY seq DESC LIMIT 1");
  let seq = head ? Number(head.seq) : 0;
  let prev = head?.hash ?? GENESIS_HASH;
  const out: ChainRecord[] = [];
  const texts: string[] = [];
  for (const e of entries) {
    await opts.pace?.();
    seq += 1;
    const fields: ChainFields = {
      seq,
      kind: e.kind,
      operation_id: e.operation_id,
      recorded_at: recordedAt,
      actor: e.actor,
      payload: e.payload,
      prev_hash: prev,
    };
    const hash = chainHash(fields, e.payloadCanonical);
    out.push({ ...fields, hash });
    texts.push(JSON.stringify(e.payload));
    prev = hash;
  }
  await insertMany(
    tx,
    "chain_records",
    ["seq", "kind", "operation_id", "stage", "observed_at", "recorded_at", "actor", "payload", "prev_hash", "hash"],
    out.map((r, i) => [
      r.seq,
      r.kind,
      r.operation_id,
      entries[i].stage ?? null,
      entries[i].observed_at ?? null,
      r.recorded_at,
      r.actor,
      texts[i],
      r.prev_hash,
      r.hash,
    ]),
  );
  return out;
}

/**
 * Written first, so concurrent appenders queue here (see ChainLock in prisma/schema.prisma).
 * Callers that must read state before appending take it themselves, first thing.
 */
export async function lockChain(db: SqlLike): Promise<void> {
  await asSql(db).run("INSERT INTO chain_lock (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = chain_lock.n + 1");
}

type StoredRow = {
  seq: number;
  kind: string;
  operationId: string | null;
  recordedAt: string;
  actor: string | null;
  payload: string;
  prevHash: string;
  hash: string;
};

export function toChainRecord(row: StoredRow): ChainRecord {
  return {
    seq: row.seq,
    kind: row.kind as ChainRecord["kind"],
    operation_id: row.operationId,
    recorded_at: row.recordedAt,
    actor: row.actor,
    payload: JSON.parse(row.payload),
    prev_hash: row.prevHash,
    hash: row.hash,
  };
}
