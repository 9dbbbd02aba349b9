import "server-only";
import type { ChainRecord } from "@/lib/domain/hash";
import type { OperationState } from "@/lib/domain/operation";
import { toInstant } from "@/lib/domain/time";
import { checkSchedule, verifierSender } from "@/lib/domain/verifier";
import { enqueueJobs, type JobInput } from "../work/jobs";
import type { SqlLike } from "../db/sql";
import type { StagePayload } from "../chain/stage-records";
import { activeVerifiersFor } from "../settings/verifiers";
import type { VerifierVersion } from "@/lib/domain/verifier";

/** The job kind of a verifier's scheduled check (lib/verifiers/run.ts handles it). */
export const VERIFIER_CHECK_JOB = "verifier.check";

/** What a scheduled check carries: the operation, the verifier version (pinned), its place in the window. */
export type VerifierCheckPayload = {
  operation_id: string;
  name: string;
  version: number;
  check: number;
  of: number;
  final: boolean;
  window_closes_at: string;
};

/** The receipts among these records that a verifier may check: their operation, tool and time. */
function receiptsOf(appended: ChainRecord[], states: Map<string, OperationState>): { operationId: string; tool: string; at: number }[] {
  const receipts: { operationId: string; tool: string; at: number }[] = [];
  for (const r of appended) {
    const p = r.payload as StagePayload;
    if (p.stage !== "receipt" || !r.operation_id || !p.observed_at) continue;
    const tool = states.get(r.operation_id)?.tool;
    const ns = toInstant(p.observed_at);
    if (tool && ns !== null) receipts.push({ operationId: r.operation_id, tool, at: Number(ns / 1_000_000n) });
  }
  return receipts;
}

/** The tools whose verifiers scheduleVerifierChecks looks up for these records. */
export const verifierToolsOf = (appended: ChainRecord[], states: Map<string, OperationState>): string[] => toolsOf(receiptsOf(appended, states));
const toolsOf = (receipts: { tool: string }[]) => [...new Set(receipts.map((r) => r.tool))];

/**
 * Inside the ingest transaction: for each receipt just recorded whose operation's tool has an
 * enabled verifier, the checks of its window as durable jobs (the same transaction: a receipt is
 * stored exactly when its checks are). A re-sent receipt records nothing, so schedules nothing;
 * the job key makes a repeat harmless anyway.
 */
export async function scheduleVerifierChecks(
  db: SqlLike,
  appended: ChainRecord[],
  states: Map<string, OperationState>,
  nowMs = Date.now(),
  /** activeVerifiersFor(verifierToolsOf(appended, states)), when it was read ahead (ingest-speculation.ts). */
  active?: VerifierVersion[],
): Promise<number> {
  const receipts = receiptsOf(appended, states);
  if (!receipts.length) return 0;
  const verifiers = active ?? (await activeVerifiersFor(db, toolsOf(receipts)));
  if (!verifiers.length) return 0;
  const jobs: JobInput[] = [];
  for (const receipt of receipts) {
    for (const v of verifiers) {
      if (v.tool !== receipt.tool) continue;
      const { checks, closesAt } = checkSchedule(v.definition.window, receipt.at, nowMs);
      const window_closes_at = new Date(closesAt).toISOString();
      for (const c of checks) {
        const payload: VerifierCheckPayload = { operation_id: receipt.operationId, name: v.name, version: v.version, check: c.check, of: c.of, final: c.final, window_closes_at };
        jobs.push({ kind: VERIFIER_CHECK_JOB, key: `${verifierSender(v.name, v.version)}:${receipt.operationId}:${c.check}`, payload, dueAt: c.dueAt });
      }
    }
  }
  await enqueueJobs(db, jobs);
  return jobs.length;
}
