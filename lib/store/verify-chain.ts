import "server-only";
import { ChainVerifier, type ChainVerdict } from "@/lib/domain/hash";
import { toChainRecord } from "./chain";
import { reader } from "./db";

const PAGE = 5000;

/** Checks every link of the stored chain, page by page, in seq order. */
export async function verifyStoredChain(
  onProgress?: (checked: number) => void,
  opts: { watch?: number[] } = {},
): Promise<{ verdict: ChainVerdict; hashes: Map<number, string> }> {
  const db = await reader();
  const verifier = new ChainVerifier(undefined, { watch: opts.watch });
  const done = () => ({ verdict: verifier.verdict(), hashes: verifier.hashes });
  let after = 0;
  for (;;) {
    const rows = await db.chainRecord.findMany({ where: { seq: { gt: after } }, orderBy: { seq: "asc" }, take: PAGE });
    if (!rows.length) break;
    for (const row of rows) {
      let record;
      try {
        record = toChainRecord(row);
      } catch {
        return { verdict: { ok: false, badSeq: row.seq, count: verifier.verdict().count, problem: "payload is not valid JSON" }, hashes: verifier.hashes };
      }
      if (!verifier.push(record)) return done();
    }
    after = rows[rows.length - 1].seq;
    onProgress?.(after);
  }
  return done();
}
