import "server-only";
import { chainOf, EMPTY_HEAD, parseChainCount, type ChainHead } from "@/lib/domain/chains";
import { chainHash, type ChainFields, type ChainRecord } from "@/lib/domain/hash";
import { provider } from "../db/database";
import { currentDatabaseUrl, writeTransaction } from "../db/db";
import { asSql, insertMany, placeholder, selectIn, type Sql, type SqlLike } from "../db/sql";

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
 * Appends entries to the audit chain inside the caller's transaction: takes the chain lock,
 * reads the head, assigns consecutive seqs and links each hash to the one before. With several
 * chains (lib/domain/chains.ts), each entry goes to its operation's chain: those chains' locks
 * and heads, seqs from the one counter in the entries' order, each linked to its chain's last.
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
  const n = await chainCountIn(tx);
  // Each chain's head: one chain's from its last record (under the lock); several chains' from
  // their lock rows, read while taking them (taking a lock this transaction holds is harmless).
  const chainOfEntry = entries.map((e) => chainOf(e.operation_id, n));
  const heads = new Map<number, ChainHead>();
  // Several chains: the seqs come from the one counter (takeSeqs), in the entries' order.
  let seqs: number[] | null = null;
  if (n === 1) {
    if (!opts.locked) await lockChain(tx);
    heads.set(0, await singleChainHead(tx));
  } else {
    for (const [c, head] of await lockChains(tx, [...new Set(chainOfEntry)])) heads.set(c, head);
    seqs = await takeSeqs(tx, entries.length);
  }
  const lookUp = [...new Set(entries.filter((e) => e.operation_id !== null && e.op_seq === undefined).map((e) => e.operation_id!))];
  const opSeqs = lookUp.length ? await createdSeqsOf(tx, lookUp) : new Map<string, number>();
  const linked = await linkEntries(entries, { chainOfEntry, heads, seqs, opSeqs, recordedAt, pace: opts.pace });
  await storeLinked(tx, linked, n);
  return linked.records;
}

/** Entries given their seqs and hashes, linked after the heads they were given (nothing stored yet). */
export type Linked = {
  entries: ChainEntry[];
  records: ChainRecord[];
  /** Each record's payload as stored (JSON text), and its op_seq. */
  texts: string[];
  ops: (number | null)[];
  /** Each chain's head after these records. */
  heads: Map<number, ChainHead>;
};

/**
 * The hashing half of an append, without the database: each entry's seq (after its chain's head,
 * or from `seqs`), its op_seq, and its hash linked to the record before it. Pure given the
 * heads, so it can run before the lock is taken (ingest-speculation.ts checks the heads under it).
 */
export async function linkEntries(
  entries: ChainEntry[],
  at: {
    chainOfEntry: number[];
    heads: Map<number, ChainHead>;
    seqs: number[] | null;
    opSeqs?: Map<string, number>;
    recordedAt: string;
    pace?: () => Promise<void>;
  },
): Promise<Linked> {
  const heads = new Map(at.heads);
  const opSeqs = new Map(at.opSeqs ?? []);
  const records: ChainRecord[] = [];
  const texts: string[] = [];
  const ops: (number | null)[] = [];
  for (const [i, e] of entries.entries()) {
    await at.pace?.();
    const c = at.chainOfEntry[i];
    const head = heads.get(c)!;
    const seq = at.seqs ? at.seqs[i] : head.seq + 1;
    const prev = head.hash;
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
      recorded_at: at.recordedAt,
      actor: e.actor,
      payload: e.payload,
      prev_hash: prev,
    };
    const hash = chainHash(fields, e.payloadCanonical);
    records.push({ ...fields, hash });
    texts.push(JSON.stringify(e.payload));
    heads.set(c, { seq, hash, records: head.records + 1 });
  }
  return { entries, records, texts, ops, heads };
}

/** The storing half: the linked records into chain_records, and (several chains) the new heads into their lock rows. */
export async function storeLinked(tx: Sql, linked: Linked, n: number): Promise<void> {
  if (!linked.records.length) return;
  const { entries, texts, ops } = linked;
  await insertMany(
    tx,
    "chain_records",
    ["seq", "kind", "operation_id", "stage", "observed_at", "recorded_at", "actor", "payload", "prev_hash", "hash", "op_seq"],
    linked.records.map((r, i) => [
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
  if (n > 1) await writeHeads(tx, linked.heads);
}

/** A single-chain database's head: its last record (read under the chain lock to be current). */
export async function singleChainHead(db: SqlLike): Promise<ChainHead> {
  const [head] = await asSql(db).all<{ seq: number | bigint; hash: string }>("SELECT seq, hash FROM chain_records ORDER BY seq DESC LIMIT 1");
  return head ? { seq: Number(head.seq), hash: head.hash, records: Number(head.seq) } : EMPTY_HEAD;
}

/** Each chain's new head into its lock row: one statement on PostgreSQL, one a chain on SQLite (in process, cheap). */
async function writeHeads(tx: Sql, heads: Map<number, ChainHead>): Promise<void> {
  const p = placeholder;
  if (provider() === "postgresql" && heads.size > 1) {
    await tx.write(
      "chain_lock",
      `UPDATE chain_lock AS l SET head_seq = (v->>1)::int, head_hash = v->>2, head_records = (v->>3)::int FROM jsonb_array_elements(${p(1)}::jsonb) AS v WHERE l.id = (v->>0)::int`,
      [JSON.stringify([...heads].map(([c, h]) => [c + 1, h.seq, h.hash, h.records]))],
      true,
    );
    return;
  }
  for (const [c, head] of heads) {
    await tx.run(`UPDATE chain_lock SET head_seq = ${p(1)}, head_hash = ${p(2)}, head_records = ${p(3)} WHERE id = ${p(4)}`, [head.seq, head.hash, head.records, c + 1]);
  }
}

/** The PostgreSQL sequence seqs come from when a database has several chains (made with the count). */
const SEQ_COUNTER = "reconcile_chain_seq";

/**
 * k new seqs, rising, each above every seq any transaction took before: from the sequence on
 * PostgreSQL, which transactions of other chains take from without waiting for each other's
 * commit (a seq a rolled-back transaction took is never used: a gap between chains' records,
 * never inside a chain's links); on SQLite, whose writes are one at a time, after the highest.
 */
async function takeSeqs(tx: Sql, k: number): Promise<number[]> {
  if (provider() === "postgresql") {
    const rows = await tx.all<{ v: number | bigint | string }>(`SELECT nextval('${SEQ_COUNTER}') AS v FROM generate_series(1, ${placeholder(1)}::int)`, [k]);
    return rows.map((r) => Number(r.v)).sort((a, b) => a - b);
  }
  const [top] = await tx.all<{ seq: number | bigint | null }>("SELECT max(seq) AS seq FROM chain_records");
  const from = Number(top?.seq ?? 0);
  return Array.from({ length: k }, (_, i) => from + 1 + i);
}

/**
 * Written first, so concurrent appenders queue here (see ChainLock in prisma/schema.prisma).
 * Callers that must read state before appending take it themselves, first thing: for the
 * operations they will append to (their chains), or "all" chains (a checkpoint, a rebuild).
 * Records of no operation (security events) go to chain 0, the default.
 */
export async function lockChain(db: SqlLike, scope: (string | null)[] | "all" = [null]): Promise<void> {
  const tx = asSql(db);
  const n = await chainCountIn(tx);
  if (n === 1) {
    await tx.run("INSERT INTO chain_lock (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = chain_lock.n + 1");
    return;
  }
  await lockChains(tx, scope === "all" ? Array.from({ length: n }, (_, c) => c) : [...new Set(scope.map((id) => chainOf(id, n)))]);
}

/** Takes these chains' lock rows, in ascending order (so two transactions never wait on each other), and reads their heads. */
async function lockChains(tx: Sql, chains: number[]): Promise<Map<number, ChainHead>> {
  const heads = new Map<number, ChainHead>();
  const sorted = [...chains].sort((a, b) => a - b);
  if (provider() === "postgresql" && sorted.length > 1) {
    // One statement for all of them: FOR UPDATE takes the rows' locks in the ORDER BY's order.
    const rows = await tx.all<HeadRow>(
      `SELECT id, head_seq, head_hash, head_records FROM chain_lock WHERE id IN (SELECT (jsonb_array_elements_text(${placeholder(1)}::jsonb))::int) ORDER BY id FOR UPDATE`,
      [JSON.stringify(sorted.map((c) => c + 1))],
    );
    for (const r of rows) heads.set(Number(r.id) - 1, headOf(r));
    // The rows are made with the chain count; one missing (a database from before) is made here.
    if (heads.size === sorted.length) return heads;
  }
  for (const c of sorted) {
    if (heads.has(c)) continue;
    const [row] = await tx.all<HeadRow>(
      `INSERT INTO chain_lock (id, n) VALUES (${placeholder(1)}, 1) ON CONFLICT (id) DO UPDATE SET n = chain_lock.n + 1 RETURNING id, head_seq, head_hash, head_records`,
      [c + 1],
    );
    heads.set(c, headOf(row));
  }
  return heads;
}

/**
 * Every chain's head, in chain order, as committed (several chains only): what a verification
 * or an export covers, so that records appended meanwhile to any chain are left for the next.
 */
export async function committedHeads(db: SqlLike, n: number): Promise<ChainHead[]> {
  const rows = await asSql(db).all<HeadRow>("SELECT id, head_seq, head_hash, head_records FROM chain_lock WHERE id >= 1");
  const heads: ChainHead[] = Array.from({ length: n }, () => EMPTY_HEAD);
  for (const r of rows) {
    const c = Number(r.id) - 1;
    if (c < n) heads[c] = headOf(r);
  }
  return heads;
}

type HeadRow = { id: number | bigint; head_seq: number | bigint | null; head_hash: string | null; head_records: number | bigint | null };
const headOf = (r: HeadRow | undefined): ChainHead =>
  r?.head_seq != null && r.head_hash && r.head_records != null ? { seq: Number(r.head_seq), hash: r.head_hash, records: Number(r.head_records) } : EMPTY_HEAD;

/**
 * With several chains, the rows derived from more than one operation (rollups, recovery) are
 * written under this one lock row (id 0), taken after the chains': transactions of different
 * chains append in parallel and queue only here. With one chain the chain lock covers them.
 */
export async function lockDerived(db: SqlLike): Promise<void> {
  const tx = asSql(db);
  if ((await chainCountIn(tx)) === 1) return;
  await tx.run("INSERT INTO chain_lock (id, n) VALUES (0, 1) ON CONFLICT (id) DO UPDATE SET n = chain_lock.n + 1");
}

/** Records this database's chain count if it has none yet (at server start), and returns it. */
export async function recordChainCount(): Promise<number> {
  return writeTransaction((tx) => chainCountIn(tx));
}

/** Per database: its chain count, once known (it never changes). */
const counts = new Map<string, number>();

/** The chain count when this process already knows it (read at server start), else null. */
export function chainCountIfKnown(): number | null {
  return counts.get(currentDatabaseUrl()) ?? null;
}

/** The chain count when this process already knows it, else 1 (for grouping work only: never for seqs). */
export function knownChainCount(): number {
  return counts.get(currentDatabaseUrl()) ?? 1;
}

/**
 * This database's chain count (ChainSettings in prisma/schema.prisma), read in the caller's
 * transaction. The first caller on a new database records it: RECONCILE_CHAINS, or 1 when the
 * database already has records (it was made before chains could be several). `readOnly` (a
 * reader, outside a write transaction) records nothing and reads a database without a count as one chain.
 */
export async function chainCountIn(db: SqlLike, opts: { readOnly?: boolean } = {}): Promise<number> {
  const url = currentDatabaseUrl();
  const known = counts.get(url);
  if (known !== undefined) return known;
  const tx = asSql(db);
  const read = async () => (await tx.all<{ chains: number | bigint }>("SELECT chains FROM chain_settings WHERE id = 1"))[0];
  let row = await read();
  if (!row && opts.readOnly) return 1; // nothing was appended yet: an empty chain reads the same either way
  if (!row) {
    const [any] = await tx.all<{ seq: number | bigint }>("SELECT seq FROM chain_records LIMIT 1");
    const chosen = any ? 1 : parseChainCount(process.env.RECONCILE_CHAINS);
    const made = await tx.all(`INSERT INTO chain_settings (id, chains, created_at) VALUES (1, ${placeholder(1)}, ${placeholder(2)}) ON CONFLICT (id) DO NOTHING RETURNING id`, [
      chosen,
      new Date().toISOString(),
    ]);
    if (made.length && chosen > 1) {
      // Every chain's lock row (and the derived rows' one, id 0), so they can be locked together.
      await tx.run(`INSERT INTO chain_lock (id, n) SELECT value, 0 FROM (${Array.from({ length: chosen + 1 }, (_, i) => `SELECT ${i} AS value`).join(" UNION ALL ")}) AS ids WHERE true ON CONFLICT (id) DO NOTHING`);
      // The counter of several chains' seqs, made with the count that needs it (takeSeqs).
      if (provider() === "postgresql") await tx.run(`CREATE SEQUENCE IF NOT EXISTS ${SEQ_COUNTER} AS integer`);
    }
    row = await read();
  }
  const n = Number(row.chains);
  counts.set(url, n);
  return n;
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
