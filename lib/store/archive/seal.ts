import "server-only";
import { currentProjectKey } from "../db/project-context";
import { GENESIS_HASH, type ChainRecord } from "@/lib/domain/hash";
import { cutoffOf, daySegments, publishedThroughOf, sealablePrefix, type SealCandidate } from "@/lib/domain/retention";
import { writeSegment, type WrittenSegment } from "@/lib/archive/segments";
import type { ArchiveTarget } from "@/lib/archive/targets";
import { chainCountIn, lockChain, toChainRecord } from "../chain/chain";
import { signingKey } from "../chain/checkpoints";
import { recordSecurityEvent } from "../chain/security-events";
import { reader, writeTransaction } from "../db/db";
import { asSql, deleteIn, placeholder, selectIn, type SqlLike } from "../db/sql";
import { provider, type Tx } from "../db/database";
import { StoreError } from "../errors";

/*
 * Retention (docs/DEPLOY.md "Retention and archive"): seals the chain's oldest whole days into
 * archive segments, then deletes them from the database. Each segment is written, read back and
 * verified first (lib/archive/segments.ts); then one transaction inserts its sealed_through row
 * (which is what lets the append-only triggers allow the deletes), deletes its records, the
 * operations whose every record it holds and their derived rows, and appends an archive.sealed
 * record naming the segment. A crash between writing and deleting leaves the database as it was:
 * the next run writes the same segment again (identical records) and goes on.
 */

/** One sealed segment as the database remembers it (the sealed_through table). */
export type SealedSegment = {
  chain: number;
  first_seq: number;
  last_seq: number;
  head_hash: string;
  records: number;
  location: string;
  sha256: string;
  sealed_at: string;
};

type SealedRow = { chain: number | bigint; first_seq: number | bigint; sealed_through_seq: number | bigint; head_hash: string; records: number | bigint; location: string; segment_sha256: string; sealed_at: string };
const toSegment = (r: SealedRow): SealedSegment => ({
  chain: Number(r.chain),
  first_seq: Number(r.first_seq),
  last_seq: Number(r.sealed_through_seq),
  head_hash: r.head_hash,
  records: Number(r.records),
  location: r.location,
  sha256: r.segment_sha256,
  sealed_at: r.sealed_at,
});

/** Every sealed segment, oldest first. */
export async function sealedSegments(db?: SqlLike): Promise<SealedSegment[]> {
  const rows = await asSql(db ?? (await reader())).all<SealedRow>("SELECT * FROM sealed_through ORDER BY chain, sealed_through_seq");
  return rows.map(toSegment);
}

/** The chain's last sealed segment (null: nothing sealed): the live chain continues from its head. */
export async function lastSealed(db: SqlLike, chain = 0): Promise<SealedSegment | null> {
  const [row] = await asSql(db).all<SealedRow>(`SELECT * FROM sealed_through WHERE chain = ${placeholder(1)} ORDER BY sealed_through_seq DESC LIMIT 1`, [chain]);
  return row ? toSegment(row) : null;
}

export type SealReport = { cutoff: string; sealed: SealedSegment[]; records: number; stoppedAt: { seq: number; why: string } | null };

/** How many records one pass looks at (a pass seals what it can, then looks again). */
const WINDOW = 20_000;

/**
 * Seals every whole UTC day older than `retentionDays` that may go, segment by segment, into
 * `target`. Returns what it sealed and where it stopped. Only a database of one chain for now
 * (a chain's records are told apart by seq range, which several chains share).
 */
export async function sealExpired(target: ArchiveTarget, retentionDays: number, opts: { now?: Date; actor?: string; window?: number } = {}): Promise<SealReport> {
  const cutoff = cutoffOf(opts.now ?? new Date(), retentionDays);
  const report: SealReport = { cutoff, sealed: [], records: 0, stoppedAt: null };
  const db = await reader();
  if ((await chainCountIn(db, { readOnly: true })) > 1) throw new StoreError("conflict", "retention seals a database of one chain only for now (RECONCILE_CHAINS > 1 is not supported yet)");
  for (;;) {
    const last = await lastSealed(db);
    const after = last?.last_seq ?? 0;
    const candidates = (
      await asSql(db).all<{ seq: number | bigint; operation_id: string | null; recorded_at: string }>(
        `SELECT seq, operation_id, recorded_at FROM chain_records WHERE seq > ${placeholder(1)} ORDER BY seq LIMIT ${placeholder(2)}`,
        [after, opts.window ?? WINDOW],
      )
    ).map((r): SealCandidate => ({ seq: Number(r.seq), operation_id: r.operation_id, recorded_at: r.recorded_at }));
    if (!candidates.length) return report;
    const through = await publishedThrough(db);
    const kept = await notArchivable(db, [...new Set(candidates.filter((c) => c.operation_id !== null).map((c) => c.operation_id!))], cutoff);
    const prefix = sealablePrefix(candidates, { kept, cutoff, through });
    const stop = candidates[prefix?.count ?? 0];
    if (stop) report.stoppedAt = { seq: stop.seq, why: whyKept(stop, kept, cutoff, through) };
    if (!prefix) return report;
    for (const day of daySegments(candidates, prefix.count)) {
      const sealed = await sealSegment(target, day.first_seq, day.last_seq, opts.actor ?? "retention");
      report.sealed.push(sealed);
      report.records += sealed.records;
    }
    if (stop) return report;
  }
}

function whyKept(r: SealCandidate, kept: Set<string>, cutoff: string, through: number): string {
  if (r.seq > through) return "no signed checkpoint whose webhook announcement is delivered covers it yet";
  if (r.operation_id !== null && kept.has(r.operation_id)) return `operation ${r.operation_id} needs review, is claimed, awaits approval or has a record after ${cutoff}`;
  return `recorded at ${r.recorded_at}, after the cut-off ${cutoff}`;
}

/**
 * The last seq retention may seal: covered by a signed checkpoint whose webhook announcement
 * (checkpoint.created) is delivered, or given up on (failed, cancelled), to every endpoint.
 */
async function publishedThrough(db: SqlLike): Promise<number> {
  const sql = asSql(db);
  const sizes = (await sql.all<{ size: number | bigint }>("SELECT size FROM checkpoints")).map((r) => Number(r.size));
  const waiting = await sql.all<{ body: string }>(
    "SELECT m.body FROM webhook_messages m WHERE m.type = 'checkpoint.created' AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.message_id = m.id AND d.status = 'pending')",
  );
  const undelivered = waiting.map((w) => Number((JSON.parse(w.body) as { data?: { size?: unknown } }).data?.size)).filter(Number.isSafeInteger);
  return publishedThroughOf(sizes, undelivered);
}

/**
 * Of these operations, those that must stay live: needing review, claimed, awaiting approval, or
 * with any record at or after the cut-off (an operation goes whole or not at all).
 */
async function notArchivable(db: SqlLike, ids: string[], cutoff: string): Promise<Set<string>> {
  const kept = new Set<string>();
  if (!ids.length) return kept;
  for (const r of await selectIn<{ operation_id: string }>(db, "SELECT operation_id FROM operation_views WHERE operation_id IN %IN% AND needs_review", ids)) kept.add(r.operation_id);
  for (const r of await selectIn<{ operation_id: string }>(db, "SELECT operation_id FROM operation_approvals WHERE operation_id IN %IN% AND status = %P1%", ids, ["pending"])) kept.add(r.operation_id);
  for (const r of await selectIn<{ operation_id: string }>(
    db,
    "SELECT DISTINCT operation_id FROM chain_records WHERE op_seq IN (SELECT created_seq FROM operations WHERE operation_id IN %IN%) AND recorded_at >= %P1%",
    ids,
    [cutoff],
  ))
    kept.add(r.operation_id);
  // Claimed: the latest assignment record of the operation is a claim.
  const assignments = await selectIn<{ operation_id: string; payload: string; seq: number | bigint }>(
    db,
    "SELECT operation_id, payload, seq FROM chain_records WHERE op_seq IN (SELECT created_seq FROM operations WHERE operation_id IN %IN%) AND kind = %P1% ORDER BY seq",
    ids,
    ["assignment"],
  );
  const holder = new Map<string, boolean>();
  for (const a of assignments) {
    const p = JSON.parse(a.payload) as { action?: string; assignee?: string | null };
    holder.set(a.operation_id, p.action === "claim" && !!p.assignee);
  }
  for (const [id, held] of holder) if (held) kept.add(id);
  return kept;
}

/** The records from `first` to `last`, in seq order. */
async function recordsBetween(db: SqlLike, first: number, last: number): Promise<ChainRecord[]> {
  const rows = await asSql(db).all<{ seq: number | bigint; kind: string; operation_id: string | null; recorded_at: string; actor: string | null; payload: string; prev_hash: string; hash: string }>(
    `SELECT seq, kind, operation_id, recorded_at, actor, payload, prev_hash, hash FROM chain_records WHERE seq >= ${placeholder(1)} AND seq <= ${placeholder(2)} ORDER BY seq`,
    [first, last],
  );
  return rows.map((r) =>
    toChainRecord({ seq: Number(r.seq), kind: r.kind, operationId: r.operation_id, recordedAt: r.recorded_at, actor: r.actor, payload: r.payload, prevHash: r.prev_hash, hash: r.hash }),
  );
}

/** Writes, reads back and verifies one segment, then deletes it from the database in one transaction. */
async function sealSegment(target: ArchiveTarget, first: number, last: number, actor: string): Promise<SealedSegment> {
  const db = await reader();
  const prev = await lastSealed(db);
  if ((prev?.last_seq ?? 0) + 1 !== first) throw new StoreError("conflict", `segment ${first}-${last} does not follow the last sealed seq ${prev?.last_seq ?? 0}`);
  const records = await recordsBetween(db, first, last);
  if (records.length !== last - first + 1) throw new StoreError("conflict", `seqs ${first}-${last} are not all in the database (${records.length} records)`);
  const written = await writeSegment(target, records, { project: currentProjectKey(), chain: 0, prevHead: prev?.head_hash ?? GENESIS_HASH, linked: false, signer: signingKey() });
  return writeTransaction((tx) => deleteSealed(tx, written, actor));
}

async function deleteSealed(tx: Tx, written: WrittenSegment, actor: string): Promise<SealedSegment> {
  const c = written.checkpoint;
  await lockChain(tx);
  const sql = asSql(tx);
  // Another run sealed it meanwhile: nothing to do (the segment it wrote is the same).
  const prev = await lastSealed(tx);
  if ((prev?.last_seq ?? 0) >= c.last_seq) return prev!;
  if ((prev?.last_seq ?? 0) + 1 !== c.first_seq) throw new StoreError("conflict", `segment ${c.first_seq}-${c.last_seq} does not follow the last sealed seq ${prev?.last_seq ?? 0}`);
  const p = placeholder;
  const row: SealedSegment = { chain: c.chain, first_seq: c.first_seq, last_seq: c.last_seq, head_hash: c.head_hash_at_last_seq, records: c.records, location: written.location, sha256: written.sha256, sealed_at: c.sealed_at };
  await sql.run(
    `INSERT INTO sealed_through (chain, first_seq, sealed_through_seq, head_hash, records, location, segment_sha256, sealed_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)})`,
    [row.chain, row.first_seq, row.last_seq, row.head_hash, row.records, row.location, row.sha256, row.sealed_at],
  );
  // First the record naming the segment: it is the live chain's head whatever is deleted (a chain
  // whose every record went would otherwise start again from seq 1).
  await recordSecurityEvent(tx, actor, {
    type: "archive.sealed",
    chain: c.chain,
    first_seq: c.first_seq,
    last_seq: c.last_seq,
    records: c.records,
    head_hash: c.head_hash_at_last_seq,
    segment: `${c.project}/${c.chain}/${c.first_seq}-${c.last_seq}`,
    location: written.location,
    sha256: written.sha256,
  });
  // The operations whose every record is now sealed (an operation spanning two days goes with the later segment).
  const ops = await sql.all<{ operation_id: string; created_seq: number | bigint }>(
    `SELECT o.operation_id, o.created_seq FROM operations o WHERE o.created_seq <= ${p(1)} AND NOT EXISTS (SELECT 1 FROM chain_records c WHERE c.op_seq = o.created_seq AND c.seq > ${p(2)})`,
    [c.last_seq, c.last_seq],
  );
  const ids = ops.map((o) => o.operation_id);
  const seqs = ops.map((o) => Number(o.created_seq));
  for (const table of ["operation_views", "operation_edges", "operation_recovers", "audit_samples", "operation_approvals"]) await deleteIn(tx, table, "operation_id", ids);
  await deleteIn(tx, "operation_keys", "created_seq", seqs);
  if (provider() === "postgresql") {
    await deleteIn(tx, "operation_search", "created_seq", seqs);
    await deleteIn(tx, "operation_search_text", "created_seq", seqs);
  } else await deleteIn(tx, "operation_search", "rowid", seqs);
  await sql.run(`DELETE FROM chain_records WHERE seq >= ${p(1)} AND seq <= ${p(2)}`, [c.first_seq, c.last_seq]);
  await deleteIn(tx, "operations", "operation_id", ids);
  return row;
}
