import "server-only";
import { chainHash, ChainVerifier, GENESIS_HASH, type ChainFields, type ChainRecord, type ChainVerdict } from "@/lib/domain/hash";
import { instanceReader } from "../db/db";
import { asSql, placeholder, type SqlLike } from "../db/sql";

/**
 * The instance's own hash chain (instance_events, prisma/schema.prisma): the security events of
 * sign-in, users, tokens, projects and members. Written in the instance's database only, by
 * recordSecurityEvent when the caller works on the instance (`inInstance`), and linked exactly as
 * a project's chain records are (kind "security", no operation, seq stepping by one from the
 * genesis hash), so that its export verifies with `audit:verify --file` as any one-chain trail.
 */

/** chain_lock's row for this chain: written first, so appends queue (and, on SQLite, hold the write lock before the head is read). */
const INSTANCE_LOCK_ROW = -1;

/**
 * Serialises the caller's transaction with every other change to the instance's people and
 * projects (and their events): the row lock of this chain, not of any project's chain, so
 * sign-ins never wait on a project's ingest.
 */
export async function lockInstanceChain(db: SqlLike): Promise<void> {
  await asSql(db).run(`INSERT INTO chain_lock (id, n) VALUES (${INSTANCE_LOCK_ROW}, 1) ON CONFLICT (id) DO UPDATE SET n = chain_lock.n + 1`);
}

type Row = { seq: number | bigint; recorded_at: string; actor: string | null; payload: string; prev_hash: string; hash: string };

const toRecord = (r: Row): ChainRecord => ({
  seq: Number(r.seq),
  kind: "security",
  operation_id: null,
  recorded_at: r.recorded_at,
  actor: r.actor,
  payload: JSON.parse(r.payload),
  prev_hash: r.prev_hash,
  hash: r.hash,
});

/** Appends one event to the instance chain inside the caller's transaction (which must be on the instance's database). */
export async function appendInstanceEvent(db: SqlLike, actor: string | null, payload: unknown, recordedAt = new Date().toISOString()): Promise<ChainRecord> {
  const tx = asSql(db);
  await lockInstanceChain(tx);
  const [head] = await tx.all<{ seq: number | bigint; hash: string }>("SELECT seq, hash FROM instance_events ORDER BY seq DESC LIMIT 1");
  const fields: ChainFields = {
    seq: head ? Number(head.seq) + 1 : 1,
    kind: "security",
    operation_id: null,
    recorded_at: recordedAt,
    actor,
    payload,
    prev_hash: head?.hash ?? GENESIS_HASH,
  };
  const hash = chainHash(fields);
  const p = placeholder;
  await tx.run(`INSERT INTO instance_events (seq, recorded_at, actor, payload, prev_hash, hash) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)})`, [
    fields.seq,
    recordedAt,
    actor,
    JSON.stringify(payload),
    fields.prev_hash,
    hash,
  ]);
  return { ...fields, hash };
}

const PAGE = 1000;

/**
 * The instance chain's records in seq order, page by page (memory stays flat), up to its head as
 * it stood when the read began (events appended meanwhile wait for the next read).
 */
export async function* instanceEvents(opts: { after?: number } = {}): AsyncGenerator<ChainRecord> {
  const db = await instanceReader();
  const sql = asSql(db);
  const [top] = await sql.all<{ seq: number | bigint | null }>("SELECT max(seq) AS seq FROM instance_events");
  const last = Number(top?.seq ?? 0);
  let after = opts.after ?? 0;
  while (after < last) {
    const rows = await sql.all<Row>(
      `SELECT seq, recorded_at, actor, payload, prev_hash, hash FROM instance_events WHERE seq > ${placeholder(1)} AND seq <= ${placeholder(2)} ORDER BY seq LIMIT ${PAGE}`,
      [after, last],
    );
    if (!rows.length) return;
    for (const r of rows) yield toRecord(r);
    after = Number(rows[rows.length - 1].seq);
  }
}

/** The latest events, newest first (the Security log page's list). */
export async function latestInstanceEvents(limit: number): Promise<ChainRecord[]> {
  const db = await instanceReader();
  const rows = await asSql(db).all<Row>(`SELECT seq, recorded_at, actor, payload, prev_hash, hash FROM instance_events ORDER BY seq DESC LIMIT ${placeholder(1)}`, [limit]);
  return rows.map(toRecord);
}

/**
 * Checks every link of the instance chain from the genesis hash: the verdict names the first bad
 * seq; `hashes` holds the hash at each seq in `watch` (checkpoint sizes, instance-checkpoints.ts).
 */
export async function verifyInstanceChain(opts: { watch?: number[]; onProgress?: (checked: number) => void } = {}): Promise<{ verdict: ChainVerdict; hashes: Map<number, string> }> {
  const verifier = new ChainVerifier(undefined, { watch: opts.watch });
  let n = 0;
  try {
    for await (const r of instanceEvents()) {
      if (!verifier.push(r)) break;
      if (++n % 5000 === 0) opts.onProgress?.(n);
    }
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    const v = verifier.verdict();
    return { verdict: { ok: false, badSeq: (v.ok ? v.lastSeq : v.badSeq) + 1, count: v.count, problem: "payload is not valid JSON" }, hashes: verifier.hashes };
  }
  return { verdict: verifier.verdict(), hashes: verifier.hashes };
}

/** The trail's size and head (null: nothing recorded yet). */
export async function instanceChainHead(): Promise<{ records: number; hash: string; at: string } | null> {
  const db = await instanceReader();
  const [head] = await asSql(db).all<{ seq: number | bigint; hash: string; recorded_at: string }>("SELECT seq, hash, recorded_at FROM instance_events ORDER BY seq DESC LIMIT 1");
  return head ? { records: Number(head.seq), hash: head.hash, at: head.recorded_at } : null;
}
