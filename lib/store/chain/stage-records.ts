import "server-only";
import type { ApprovalFact, ApprovalPayload } from "@/lib/domain/approval";
import type { CorrectionAction, CorrectionFact, Resolution } from "@/lib/domain/corrections";
import { deriveOperation, type OperationState, type StoredStage } from "@/lib/domain/operation";
import { legacySentBy, type SentBy } from "@/lib/domain/trust";
import type { Stage } from "@/lib/domain/wire";
import { pacer } from "../db/pace";
import { OF_OPERATIONS } from "./chain";
import { selectIn, type SqlLike } from "../db/sql";

/** The chain payload of a stage record. */
export type StagePayload = { stage: Stage; observed_at: string | null; data: unknown; envelope?: Record<string, unknown>; sent_by?: SentBy };

/** The chain payload of a correction. */
export type CorrectionPayload = {
  id: string;
  action: CorrectionAction;
  outcome_seen: string;
  outcome: Resolution | null;
  /** Present (true) only on a resolve that also withdrew the agent's success claim: earlier records hash without it. */
  withdraw_claim?: true;
  reason: string;
  evidence: Record<string, string> | null;
  follows: string | null;
};

type Row = { seq: number; operationId: string | null; recordedAt: string; actor: string | null; payload: string; hash: string };

export type LoadedStage = StoredStage & { operation_id: string; hash: string; sent_by: SentBy };
export type LoadedCorrection = CorrectionPayload & { seq: number; recorded_at: string; reviewer: string | null; hash: string };

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
    sent_by: p.sent_by ?? legacySentBy(row.actor),
  };
}

export type OperationRecords = { stages: LoadedStage[]; corrections: LoadedCorrection[]; approvals?: ApprovalFact[] };

/** Every stage record, correction and approval record of these operations, in chain order, grouped by operation. */
export async function loadOperationRecords(db: SqlLike, operationIds: string[]): Promise<Map<string, OperationRecords>> {
  const out = new Map<string, OperationRecords>();
  if (!operationIds.length) return out;
  const rows = await selectIn<{ seq: number | bigint; kind: string; operation_id: string; recorded_at: string; actor: string | null; payload: string; hash: string }>(
    db,
    // No `kind` predicate on purpose: with it, SQLite plans on (kind, seq) and walks every stage
    // record (2 s at a million operations, bench:ui); by operation alone it uses
    // (op_seq, seq). Other kinds are skipped below.
    `SELECT seq, kind, operation_id, recorded_at, actor, payload, hash FROM chain_records WHERE ${OF_OPERATIONS} ORDER BY seq`,
    operationIds,
  );
  // Parsing stored payloads (megabytes for a hostile operation) in slices: see pace.ts.
  const pace = pacer();
  for (const r of rows) {
    await pace();
    if (r.kind !== "stage" && r.kind !== "correction" && r.kind !== "approval") continue;
    const entry = out.get(r.operation_id) ?? { stages: [], corrections: [] };
    const seq = Number(r.seq);
    if (r.kind === "approval") {
      (entry.approvals ??= []).push({ ...(JSON.parse(r.payload) as ApprovalPayload), seq, recorded_at: r.recorded_at, actor: r.actor });
    } else if (r.kind === "stage") {
      entry.stages.push(toStoredStage({ seq, operationId: r.operation_id, recordedAt: r.recorded_at, actor: r.actor, payload: r.payload, hash: r.hash }));
    } else {
      entry.corrections.push({ ...(JSON.parse(r.payload) as CorrectionPayload), seq, recorded_at: r.recorded_at, reviewer: r.actor, hash: r.hash });
    }
    out.set(r.operation_id, entry);
  }
  return out;
}

export function correctionFacts(corrections: LoadedCorrection[]): (CorrectionFact & { reason: string })[] {
  return corrections.map((c) => ({ id: c.id, action: c.action, outcome: c.outcome, withdraw_claim: c.withdraw_claim === true, reason: c.reason }));
}

/**
 * An operation's derived state from everything loadOperationRecords read of it: stages,
 * corrections and approval records together, so no caller derives it from a part.
 */
export function stateOf(operationId: string, records: OperationRecords | undefined): OperationState {
  return deriveOperation(operationId, records?.stages ?? [], correctionFacts(records?.corrections ?? []), records?.approvals ?? []);
}
