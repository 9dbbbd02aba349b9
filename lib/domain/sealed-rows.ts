/*
 * Holding the delete guard's rows to account (issue 47). A sealed_through row is what lets the
 * append-only triggers allow a delete, so a row written by hand (direct write access: the threat
 * the triggers exist for) would let records go unsealed while the live chain still verified from
 * the row's head. Retention writes each row in the same transaction as a chained `archive.sealed`
 * record naming the same chain, range and head hash (lib/store/archive/seal.ts). So every row must
 * be matched by such a record: in the live chain (verified with it), or, once a later segment
 * sealed that record too, in the archive (audit:verify --archive). Rows also follow each other
 * from seq 1, name chain 0 of a database of one chain, and exist only where retention and the
 * archive are on.
 */

/** A sealed_through row. */
export type SealedRow = { chain: number; first_seq: number; last_seq: number; head_hash: string };

/** An archive.sealed record: where it is in the chain and what it names. */
export type SealedClaim = SealedRow & { seq: number };

export type SealedRowsVerdict = { ok: true; rows: number; unchecked: number } | { ok: false; problem: string };

const range = (r: SealedRow) => `chain ${r.chain} seq ${r.first_seq}-${r.last_seq}`;

/** Reads an archive.sealed claim from a chained security record's payload (null: not one). */
export function sealedClaimOf(seq: number, payload: unknown): SealedClaim | null {
  if (!payload || typeof payload !== "object") return null;
  const p = payload as Record<string, unknown>;
  if (p.type !== "archive.sealed") return null;
  const { chain, first_seq, last_seq, head_hash } = p;
  if (![chain, first_seq, last_seq].every(Number.isSafeInteger) || typeof head_hash !== "string") return null;
  return { seq, chain: chain as number, first_seq: first_seq as number, last_seq: last_seq as number, head_hash };
}

/**
 * Checks every row (oldest first). `retentionOff`: why retention or the archive is off for this
 * project (null: both on). `archived`: the archive.sealed records found in the archive's segments
 * (null: the archive was not walked; a row whose record was itself sealed is then left unchecked
 * and counted as such, never an earlier row's only check being the last row's).
 */
export function checkSealedRows(
  rows: SealedRow[],
  input: { chains: number; retentionOff: string | null; live: SealedClaim[]; archived: SealedClaim[] | null },
): SealedRowsVerdict {
  if (!rows.length) return { ok: true, rows: 0, unchecked: 0 };
  const fail = (problem: string): SealedRowsVerdict => ({ ok: false, problem });
  if (input.retentionOff) {
    return fail(`sealed_through holds ${rows.length} row(s) (the first: ${range(rows[0])}), but ${input.retentionOff}: nothing could have sealed them, and the records they cover were deleted without an archive`);
  }
  let unchecked = 0;
  let next = 1;
  for (const [i, row] of rows.entries()) {
    if (input.chains !== 1) return fail(`sealed_through row ${range(row)}: this database has ${input.chains} chains, and retention seals only a database of one`);
    if (row.chain !== 0) return fail(`sealed_through row ${range(row)}: retention seals chain 0 only`);
    if (row.first_seq !== next) return fail(`sealed_through row ${range(row)} does not follow the row before it (it should start at seq ${next})`);
    next = row.last_seq + 1;
    const sameRange = (c: SealedClaim) => c.chain === row.chain && c.first_seq === row.first_seq && c.last_seq === row.last_seq && c.seq > row.last_seq;
    const claims = [...input.live, ...(input.archived ?? [])].filter(sameRange);
    if (claims.some((c) => c.head_hash === row.head_hash)) continue;
    if (claims.length) return fail(`sealed_through row ${range(row)} has head ${row.head_hash}, but the archive.sealed record at seq ${claims[0].seq} names head ${claims[0].head_hash}`);
    const last = i === rows.length - 1;
    if (!last && input.archived === null) {
      unchecked++;
      continue;
    }
    const where = last ? "in the live chain (the last row's record cannot have been sealed yet)" : "in the live chain or the archive";
    return fail(`sealed_through row ${range(row)} is named by no chained archive.sealed record ${where}: it was not written by retention`);
  }
  return { ok: true, rows: rows.length, unchecked };
}
