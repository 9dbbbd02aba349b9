import "server-only";
import { writeTransaction, reader } from "../db/db";
import { StoreError } from "../errors";
import { recordSecurityEvent } from "../chain/security-events";

/**
 * Audit sampling rates per tool (docs/API.md "Metrics"): the share of a tool's
 * operations that verification calls verified which are drawn for review as "audit sample".
 * Drawing happens at ingest (metrics-projection.ts); a rate of 0 removes the tool's rate.
 */
export async function setAuditSampling(input: { tool: string; rate: number; by: string }): Promise<void> {
  const tool = input.tool.trim();
  if (!tool || tool.length > 200) throw new StoreError("invalid_input", "name the tool (at most 200 characters)");
  if (!Number.isFinite(input.rate) || input.rate < 0 || input.rate > 1) throw new StoreError("invalid_input", "the rate is a share between 0 and 1 (0.02 is 2 %)");
  await writeTransaction(async (tx) => {
    // A setting that decides what reviewers see is recorded in the chain, like role changes.
    await recordSecurityEvent(tx, input.by, { type: "audit_sampling.changed", tool, rate: input.rate });
    if (input.rate === 0) {
      await tx.auditSampling.deleteMany({ where: { tool } });
      return;
    }
    const row = { rate: input.rate, updatedAt: new Date().toISOString(), updatedBy: input.by };
    await tx.auditSampling.upsert({ where: { tool }, create: { tool, ...row }, update: row });
  });
}

export async function listAuditSampling(): Promise<{ tool: string; rate: number; updated_at: string; updated_by: string }[]> {
  const rows = await (await reader()).auditSampling.findMany({ orderBy: { tool: "asc" } });
  return rows.map((r) => ({ tool: r.tool, rate: r.rate, updated_at: r.updatedAt, updated_by: r.updatedBy }));
}

/** Whether the operation was drawn as an audit sample, and at what rate. */
export async function auditSampleOf(operationId: string): Promise<{ rate: number; drawn_at: string } | null> {
  const row = await (await reader()).auditSample.findUnique({ where: { operationId } });
  return row ? { rate: row.rate, drawn_at: row.drawnAt } : null;
}
