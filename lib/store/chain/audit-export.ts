import "server-only";
import { z } from "zod";
import { AUDIT_FORMATS } from "@/lib/domain/audit-format";
import { chainOf, headsRoot, headsSize, type ChainHead } from "@/lib/domain/chains";
import type { Checkpoint } from "@/lib/domain/checkpoint";
import type { ChainRecord } from "@/lib/domain/hash";
import { normalizeInstant } from "@/lib/domain/time";
import { operationIdSchema } from "@/lib/domain/wire";
import { chainCountIn, committedHeads, toChainRecord } from "./chain";
import { provider, type Db } from "../db/database";
import { reader, writeTransaction } from "../db/db";
import { recordSecurityEvent } from "./security-events";

const instant = z.string().transform((v, ctx) => normalizeInstant(v) ?? (ctx.addIssue({ code: "custom", message: "must be an RFC 3339 date-time" }), z.NEVER));

export const exportQuerySchema = z
  .object({
    format: z.enum(AUDIT_FORMATS).default("ndjson"),
    since: instant.optional(),
    until: instant.optional(),
    operation_id: operationIdSchema.optional(),
    trajectory_id: operationIdSchema.optional(),
  })
  .strict();
export type ExportQuery = z.infer<typeof exportQuerySchema>;

const PAGE = 1000;

/** Records of the chain in seq order, filtered, read page by page: memory stays flat for any size. */
export async function* exportRecords(q: ExportQuery, snapshot: ExportSnapshot = {}): AsyncGenerator<ChainRecord> {
  const db = await reader();
  // The export is the chain as it stood when the export began: records appended meanwhile wait
  // for the next one (an export that followed the head could page forever under steady ingest).
  // With several chains, each chain's committed head (a transaction of another chain may still
  // commit seqs below the highest).
  const n = await chainCountIn(db, { readOnly: true });
  snapshot.chains = n;
  const heads = n > 1 ? await committedHeads(db, n) : null;
  const head = heads
    ? { seq: Math.max(...heads.map((h) => h.seq)) }
    : await db.chainRecord.findFirst({ orderBy: { seq: "desc" }, select: { seq: true } });
  if (!head || head.seq === 0) return;
  snapshot.head = head.seq;
  if (heads) snapshot.heads = heads;
  let ids: string[] | undefined;
  if (q.trajectory_id) {
    ids = (await db.operationView.findMany({ where: { trajectoryId: q.trajectory_id }, select: { operationId: true } })).map((v) => v.operationId);
    if (q.operation_id) ids = ids.filter((id) => id === q.operation_id);
    if (!ids.length) return;
  } else if (q.operation_id) {
    ids = [q.operation_id];
  }
  // An operation's records are found by its created_seq (op_seq, on the (op_seq, seq) index),
  // and none comes before it.
  let opSeqs: number[] | undefined;
  if (ids) {
    opSeqs = (await db.operation.findMany({ where: { operationId: { in: ids } }, select: { createdSeq: true } })).map((o) => o.createdSeq);
    if (!opSeqs.length) return;
  }
  // A time range becomes a seq range first. Both databases otherwise walk the primary key from
  // the start and filter by time (4–8 s at 3.3M records for the last minute); ordered by
  // recorded_at, the subquery reads only the matching index entries. The time filter stays on
  // the pages too: recorded_at follows seq, but clocks are not trusted to be monotonic.
  let after = opSeqs ? opSeqs.reduce((a, b) => Math.min(a, b)) - 1 : 0;
  let last = head.seq;
  if (q.since) {
    const lo = await seqBound(db, "min", ">=", q.since);
    if (lo === null) return;
    after = Math.max(after, lo - 1);
  }
  if (q.until) {
    const hi = await seqBound(db, "max", "<", q.until);
    if (hi === null) return;
    last = Math.min(last, hi);
  }
  for (;;) {
    const rows = await db.chainRecord.findMany({
      where: {
        seq: { gt: after, lte: last },
        ...(opSeqs ? { opSeq: { in: opSeqs } } : {}),
        ...(q.since || q.until ? { recordedAt: { ...(q.since ? { gte: q.since } : {}), ...(q.until ? { lt: q.until } : {}) } } : {}),
      },
      orderBy: { seq: "asc" },
      take: PAGE,
      select: { seq: true, kind: true, operationId: true, recordedAt: true, actor: true, payload: true, prevHash: true, hash: true },
    });
    for (const r of rows) if (!heads || r.seq <= heads[chainOf(r.operationId, n)].seq) yield toChainRecord(r);
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1].seq;
  }
}

async function seqBound(db: Db, fn: "min" | "max", op: ">=" | "<", instant: string): Promise<number | null> {
  const param = provider() === "postgresql" ? "$1" : "?";
  const [row] = (await db.$queryRawUnsafe(
    `SELECT ${fn}(seq) AS s FROM (SELECT seq FROM chain_records WHERE recorded_at ${op} ${param} ORDER BY recorded_at) t`,
    instant,
  )) as { s: number | bigint | null }[];
  return row?.s === null || row?.s === undefined ? null : Number(row.s);
}

/** Every export is itself on the record: who exported what, when. */
export async function recordExport(actor: string, q: ExportQuery, source: string | null): Promise<void> {
  const { format, ...filter } = q;
  await writeTransaction((tx) => recordSecurityEvent(tx, actor, { type: "audit.exported", format, filter, source }));
}

/** What an export covered: the highest seq, and with several chains their count and each one's head. */
export type ExportSnapshot = { head?: number; chains?: number; heads?: ChainHead[] };

/** True when a checkpoint lies within what the export covered (one signed while it ran may not). */
export function checkpointWithin(c: Checkpoint, snapshot: ExportSnapshot): boolean {
  if (snapshot.head === undefined) return false;
  if (!c.heads || !snapshot.heads) return !c.heads && !snapshot.heads && c.size <= snapshot.head;
  return c.heads.length === snapshot.heads.length && c.heads.every((h, i) => h.seq <= snapshot.heads![i].seq);
}

/** The trail's size and head: with several chains, all their records and the Merkle root of their heads. */
export async function chainHead(): Promise<{ records: number; hash: string; chains: number } | null> {
  const db = await reader();
  const n = await chainCountIn(db, { readOnly: true });
  if (n > 1) {
    const heads = await committedHeads(db, n);
    const records = headsSize(heads);
    return records ? { records, hash: headsRoot(heads), chains: n } : null;
  }
  const head = await db.chainRecord.findFirst({ orderBy: { seq: "desc" }, select: { seq: true, hash: true } });
  return head ? { records: head.seq, hash: head.hash, chains: 1 } : null;
}
