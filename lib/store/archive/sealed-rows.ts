import "server-only";
import { checkSealedRows, type SealedClaim, type SealedRowsVerdict } from "@/lib/domain/sealed-rows";
import { sealedSegments } from "./seal";
import type { Db } from "../db/database";
import { reader } from "../db/db";

/**
 * Holds this database's sealed_through rows to the archive.sealed records a verification found
 * (lib/domain/sealed-rows.ts): `live` from verifyStoredChain, `archived` from the archive's
 * segments when audit:verify --archive walked them. `retentionOff`: why retention or the archive
 * is off for the project (null: on).
 */
export async function sealedRowsVerdict(input: { chains: number; retentionOff: string | null; live: SealedClaim[]; archived: SealedClaim[] | null }, db?: Db): Promise<SealedRowsVerdict> {
  const rows = await sealedSegments(db ?? (await reader()));
  return checkSealedRows(rows, input);
}
