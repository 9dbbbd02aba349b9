import "server-only";
import type { VerdictEvent } from "@/lib/domain/verdicts/event";
import { reader } from "../db/db";
import { VERDICT_TARGET_KINDS, type VerdictTargetKind } from "@/lib/domain/verdicts/targets";
import { VERDICT_EXPORT_STATUSES, type VerdictExportStatus } from "../work/verdict-outbox";

/** The verdict export's delivery log (docs/API.md "Verdicts out"), newest first. */

export { VERDICT_EXPORT_STATUSES, VERDICT_TARGET_KINDS, type VerdictExportStatus, type VerdictTargetKind };

export type VerdictExportRow = {
  id: string;
  /** otlp | phoenix | langfuse */
  target: VerdictTargetKind;
  operation_id: string;
  outcome: string;
  status: VerdictExportStatus;
  attempts: number;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  trace_id: string;
  span_id: string;
  /** Under the agent's own span (false: a trace of the operation's own). */
  parented: boolean;
};

export async function listVerdictExports(opts: { status?: VerdictExportStatus; target?: VerdictTargetKind; limit?: number; before?: string } = {}): Promise<VerdictExportRow[]> {
  const db = await reader();
  const limit = Math.min(Math.max(opts.limit ?? 50, 1), 200);
  const rows = await db.verdictExport.findMany({
    where: { ...(opts.status ? { status: opts.status } : {}), ...(opts.target ? { target: opts.target } : {}), ...(opts.before ? { createdAt: { lt: opts.before } } : {}) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit,
  });
  return rows.map((r) => {
    const e = JSON.parse(r.event) as VerdictEvent;
    return {
      id: r.id,
      target: r.target as VerdictTargetKind,
      operation_id: r.operationId,
      outcome: r.outcome,
      status: r.status as VerdictExportStatus,
      attempts: r.attempts,
      last_error: r.lastError,
      created_at: r.createdAt,
      delivered_at: r.deliveredAt,
      trace_id: e.trace_id,
      span_id: e.span_id,
      parented: e.parented,
    };
  });
}

export type VerdictCounts = Record<VerdictExportStatus, number>;

/** How many events are in each state, in all (the status index answers each count) and for each target. */
export async function verdictExportCounts(): Promise<VerdictCounts & { by_target: Record<VerdictTargetKind, VerdictCounts> }> {
  const db = await reader();
  const counts = await Promise.all(VERDICT_EXPORT_STATUSES.map((status) => db.verdictExport.count({ where: { status } })));
  const groups = await db.verdictExport.groupBy({ by: ["target", "status"], _count: { _all: true } });
  const zero = () => Object.fromEntries(VERDICT_EXPORT_STATUSES.map((s) => [s, 0])) as VerdictCounts;
  const byTarget = Object.fromEntries(VERDICT_TARGET_KINDS.map((k) => [k, zero()])) as Record<VerdictTargetKind, VerdictCounts>;
  for (const g of groups) {
    const t = byTarget[g.target as VerdictTargetKind];
    if (t && g.status in t) t[g.status as VerdictExportStatus] = g._count._all;
  }
  return { ...(Object.fromEntries(VERDICT_EXPORT_STATUSES.map((s, i) => [s, counts[i]])) as VerdictCounts), by_target: byTarget };
}
