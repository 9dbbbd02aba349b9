import "server-only";
import { correctionFacts, loadOperationRecords } from "../chain/stage-records";
import { selectIn, type Sql } from "../db/sql";
import { writeProjection } from "./projection";

/** Operations re-derived per statement batch when a link arrives (like a rebuild's page). */
const PAGE = 500;

/**
 * Derives again the operations of `ownerId` that wait on these traces' links
 * (lib/domain/trace-link.ts). writeProjection reads the links, so the views, search documents
 * and metric rows of earlier operations of the trace follow the link written in this
 * transaction, exactly as a rebuild would derive them. Returns how many were derived. The
 * caller holds the lock that writeProjection takes (and has written the links).
 *
 * Which operations: those whose trajectory is one of the trace ids (not linked yet), and those
 * already showing a trace's stored conversation (linked earlier: an agent named after the
 * conversation must reach them too). Only the sender's own, filtered in SQL.
 */
export async function relinkTraces(tx: Sql, traceIds: string[], ownerId: string | null): Promise<number> {
  if (!traceIds.length) return 0;
  const owner = ownerId ?? "";
  const conversations = await selectIn<{ conversation_id: string | null }>(
    tx,
    "SELECT conversation_id FROM otel_trace_links WHERE trace_id IN %IN% AND owner_id = %P1%",
    traceIds,
    [owner],
  );
  const trajectories = [...new Set([...traceIds, ...conversations.flatMap((c) => (c.conversation_id === null ? [] : [c.conversation_id]))])];
  const rows = await selectIn<{ operation_id: string; created_seq: number | bigint; created_at: string }>(
    tx,
    "SELECT v.operation_id, v.created_seq, v.created_at FROM operation_views v JOIN operations o ON o.operation_id = v.operation_id WHERE v.trajectory_id IN %IN% AND COALESCE(o.owner_id, '') = %P1%",
    trajectories,
    [owner],
  );
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
