import "server-only";
import { isPossibleOperationId } from "@/lib/domain/wire";
import { reader } from "../db/db";
import type { StagePayload } from "../chain/stage-records";

/** One stage record's payload (the stage exactly as received) as JSON text, or null. */
export async function getStagePayload(operationId: string, seq: number): Promise<{ stage: string; json: string } | null> {
  if (!isPossibleOperationId(operationId)) return null;
  const db = await reader();
  const row = await db.chainRecord.findUnique({ where: { seq }, select: { kind: true, operationId: true, payload: true } });
  if (!row || row.kind !== "stage" || row.operationId !== operationId) return null;
  const p = JSON.parse(row.payload) as StagePayload;
  return { stage: p.stage, json: JSON.stringify(p.data) };
}
