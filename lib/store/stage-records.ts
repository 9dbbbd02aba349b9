import "server-only";
import type { StoredStage } from "@/lib/domain/operation";
import type { Stage } from "@/lib/domain/wire";
import type { Db, Tx } from "./db";
import { selectIn } from "./sql";

/** The chain payload of a stage record. */
export type StagePayload = { stage: Stage; observed_at: string | null; data: unknown; envelope?: Record<string, unknown> };

type Row = { seq: number; operationId: string | null; recordedAt: string; payload: string; hash: string };

export type LoadedStage = StoredStage & { operation_id: string; hash: string };

export function toStoredStage(row: Row): LoadedStage {
  const p = JSON.parse(row.payload) as StagePayload;
  return {
    operation_id: row.operationId!,
    seq: row.seq,
    stage: p.stage,
    observed_at: p.observed_at,
    recorded_at: row.recordedAt,
    data: p.data,
    envelope: p.envelope ?? null,
    hash: row.hash,
  };
}

/** All stage records of these operations, in chain order, grouped by operation. */
export async function loadStages(db: Db | Tx, operationIds: string[]): Promise<Map<string, LoadedStage[]>> {
  const out = new Map<string, LoadedStage[]>();
  if (!operationIds.length) return out;
  const rows = await selectIn<{ seq: number | bigint; operation_id: string; recorded_at: string; payload: string; hash: string }>(
    db,
    "SELECT seq, operation_id, recorded_at, payload, hash FROM chain_records WHERE kind = 'stage' AND operation_id IN %IN% ORDER BY seq",
    operationIds,
  );
  for (const r of rows) {
    const s = toStoredStage({ seq: Number(r.seq), operationId: r.operation_id, recordedAt: r.recorded_at, payload: r.payload, hash: r.hash });
    const list = out.get(s.operation_id) ?? [];
    list.push(s);
    out.set(s.operation_id, list);
  }
  return out;
}
