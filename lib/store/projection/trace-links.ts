import "server-only";
import { correctionFacts, loadOperationRecords } from "../chain/stage-records";
import { selectIn, type Sql } from "../db/sql";
import { writeProjection } from "./projection";

/** Operations re-derived per statement batch when a link arrives (like a rebuild's page). */
const PAGE = 500;

/**
 * Derives again the operations of `ownerId` that wait on these traces' links
 * (lib/domain/trace-link.ts): those whose trajectory is still one of the trace ids. writeProjection reads the links, so the views,
 * search documents and metric rows of earlier operations of the trace follow the link written
 * in this transaction, exactly as a rebuild would derive them. Returns how many were derived.
 * The caller holds the lock that writeProjection takes (and has written the links).
 */
export async function relinkTraces(tx: Sql, traceIds: string[], ownerId: string | null): Promise<number> {
  if (!traceIds.length) return 0;
  const found = await selectIn<{ operation_id: string; created_seq: number | bigint; created_at: string; owner_id: string | null }>(
    tx,
    "SELECT v.operation_id, v.created_seq, v.created_at, o.owner_id FROM operation_views v JOIN operations o ON o.operation_id = v.operation_id WHERE v.trajectory_id IN %IN%",
    traceIds,
  );
  // Only the sender's own operations take its links (the projection checks it again).
  const rows = found.filter((r) => (r.owner_id ?? "") === (ownerId ?? ""));
  for (let i = 0; i < rows.length; i += PAGE) {
    const page = rows.slice(i, i + PAGE);
    const records = await loadOperationRecords(tx, page.map((r) => r.operation_id));
    await writeProjection(
      tx,
      page.map((r) => {
        const rec = records.get(r.operation_id);
        return {
          identity: { operationId: r.operation_id, createdSeq: Number(r.created_seq), createdAt: r.created_at },
          stages: rec?.stages ?? [],
          corrections: correctionFacts(rec?.corrections ?? []),
          approvals: rec?.approvals,
        };
      }),
    );
  }
  return rows.length;
}
