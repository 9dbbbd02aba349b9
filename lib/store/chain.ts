import "server-only";
import { chainHash, GENESIS_HASH, type ChainFields, type ChainRecord } from "@/lib/domain/hash";
import { asSql, insertMany, selectIn, type SqlLike } from "./sql";

/**
 * `WHERE` text for chain records of the operations in %IN% (for selectIn): through their
 * created_seq, on the (op_seq, seq) index.
 */
export const OF_OPERATIONS = "op_seq IN (SELECT created_seq FROM operations WHERE operation_id IN %IN%)";

/** Each of these operations' created_seq (the ones that exist). */
export async function createdSeqsOf(db: SqlLike, operationIds: string[]): Promise<Map<string, number>> {
  const rows = await selectIn<{ operation_id: string; created_seq: number | bigint }>(
    db,
    "SELECT operation_id, created_seq FROM operations WHERE operation_id IN %IN%",
    operationIds,
  );
  return new Map(rows.map((r) => [r.operation_id, Number(r.created_seq)]));
}

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
  /**
   * The operation's created_seq, stored as op_seq (not hashed) so its records are found by it
   * (prisma/schema.prisma). "new": the operation is first recorded by this append (its first
   * record's seq). Looked up when absent; an operation that does not exist is an error.
   */
  op_seq?: number | "new";
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
  const lookUp = [...new Set(entries.filter((e) => e.operation_id !== null && e.op_seq === undefined).map((e) => e.operation_id!))];
  const opSeqs = lookUp.length ? await createdSeqsOf(tx, lookUp) : new Map<string, number>();
  let seq = head ? Number(head.seq) : 0;
  let prev = head?.hash ?? GENESIS_HASH;
  const out: ChainRecord[] = [];
  const texts: string[] = [];
  const ops: (number | null)[] = [];
  for (const e of entries) {
    await opts.pace?.();
    seq += 1;
    if (e.operation_id === null) ops.push(null);
    else {
      let given = typeof e.op_seq === "number" ? e.op_seq : opSeqs.get(e.operation_id);
      if (given === undefined) {
        // Only an operation this append creates has no created_seq yet: its first record's seq.
        if (e.op_seq !== "new") throw new Error(`appendToChain: a ${e.kind} record for ${JSON.stringify(e.operation_id)}, which is no operation`);
        opSeqs.set(e.operation_id, (given = seq));
      }
      ops.push(given);
    }
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
    ["seq", "kind", "operation_id", "stage", "observed_at", "recorded_at", "actor", "payload", "prev_hash", "hash", "op_seq"],
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
      ops[i],
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
