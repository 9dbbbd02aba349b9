import "server-only";
import { chainOf, MultiChainVerifier } from "@/lib/domain/chains";
import type { ChainVerdict } from "@/lib/domain/hash";
import { sealedClaimOf, type SealedClaim } from "@/lib/domain/sealed-rows";
import { chainCountIn, committedHeads, createdSeqsOf, toChainRecord } from "./chain";
import type { Db } from "../db/database";
import { reader } from "../db/db";
import { asSql, selectIn } from "../db/sql";

const PAGE = 5000;

type Row = { seq: number; operationId: string | null; opSeq: number | null };

/**
 * op_seq is outside the hash (a lookup column): it must name the operation's created_seq, and the
 * record there must be that operation's. Otherwise an edit that got past the triggers could hide
 * records from their operation while every link still verified. The first wrong one, or null.
 */
async function opSeqProblem(db: Db, rows: Row[]): Promise<{ seq: number; problem: string } | null> {
  const owned = rows.filter((r) => r.operationId !== null);
  const ids = [...new Set(owned.map((r) => r.operationId!))];
  const created = await createdSeqsOf(db, ids);
  const targets = [...new Set(owned.filter((r) => r.opSeq !== null).map((r) => r.opSeq!))];
  const at = new Map(
    (await selectIn<{ seq: number | bigint; operation_id: string | null }>(db, "SELECT seq, operation_id FROM chain_records WHERE seq IN %IN%", targets)).map((r) => [
      Number(r.seq),
      r.operation_id,
    ]),
  );
  for (const r of owned) {
    if (r.opSeq === null) return { seq: r.seq, problem: "op_seq is missing on a record of an operation" };
    if (created.get(r.operationId!) !== r.opSeq || at.get(r.opSeq) !== r.operationId || r.opSeq > r.seq) {
      return { seq: r.seq, problem: `op_seq ${r.opSeq} is not the created_seq of ${r.operationId}` };
    }
  }
  return null;
}

/** Where the live chain starts: the head of the last segment retention sealed (null: nothing sealed, the genesis hash). */
export async function sealedStart(db: Db, chain = 0): Promise<{ seq: number; hash: string; sealedAt: string } | null> {
  const [row] = await asSql(db).all<{ seq: number | bigint; hash: string; sealed_at: string }>(
    `SELECT sealed_through_seq AS seq, head_hash AS hash, sealed_at FROM sealed_through WHERE chain = ${chain} ORDER BY sealed_through_seq DESC LIMIT 1`,
  );
  return row ? { seq: Number(row.seq), hash: row.hash, sealedAt: row.sealed_at } : null;
}

/**
 * Checks every link of the stored chains, page by page, in seq order, and that each record's
 * op_seq names its operation (opSeqProblem). Several chains are checked in the same pass, each
 * up to its head as committed when the check began (a transaction of one chain may commit seqs
 * below another chain's head after the check has read past them).
 */
export async function verifyStoredChain(
  onProgress?: (checked: number) => void,
  opts: { watch?: number[] } = {},
): Promise<{
  verdict: ChainVerdict;
  hashes: Map<number, string>;
  counts: Map<number, number>;
  chains: number;
  sealed: { seq: number; hash: string; sealedAt: string } | null;
  /** The archive.sealed records among those verified (lib/domain/sealed-rows.ts holds sealed_through to them). */
  sealedClaims: SealedClaim[];
}> {
  const db = await reader();
  const n = await chainCountIn(db, { readOnly: true });
  // Retention sealed the chain's start into the archive: the live records continue from its head
  // (audit:verify --archive walks the segments too).
  const sealed = n === 1 ? await sealedStart(db) : null;
  const heads = n > 1 ? await committedHeads(db, n) : null;
  const last = heads ? Math.max(...heads.map((h) => h.seq)) : undefined;
  const verifier = new MultiChainVerifier(n, { watch: opts.watch, starts: sealed ? [{ prevHash: sealed.hash, prevSeq: sealed.seq }] : undefined });
  const sealedClaims: SealedClaim[] = [];
  const done = (verdict = verifier.verdict()) => ({ verdict, hashes: verifier.hashes, counts: verifier.counts, chains: n, sealed, sealedClaims });
  const broken = (badSeq: number, problem: string) => done({ ok: false, badSeq, count: verifier.verdict().count, problem });
  let after = sealed?.seq ?? 0;
  for (;;) {
    const page = await db.chainRecord.findMany({ where: { seq: { gt: after, ...(last !== undefined ? { lte: last } : {}) } }, orderBy: { seq: "asc" }, take: PAGE });
    if (!page.length) break;
    const rows = heads ? page.filter((r) => r.seq <= heads[chainOf(r.operationId, n)].seq) : page;
    const wrong = await opSeqProblem(db, rows);
    for (const row of rows) {
      if (wrong && row.seq === wrong.seq) return broken(row.seq, wrong.problem);
      let record;
      try {
        record = toChainRecord(row);
      } catch {
        return broken(row.seq, "payload is not valid JSON");
      }
      if (!verifier.push(record)) return done();
      if (row.kind === "security" && row.payload.includes("archive.sealed")) {
        const claim = sealedClaimOf(row.seq, record.payload);
        if (claim) sealedClaims.push(claim);
      }
    }
    after = page[page.length - 1].seq;
    onProgress?.(after);
  }
  return done();
}
