import "server-only";
import { reader } from "../db/db";
import { asSql, placeholder as ph } from "../db/sql";
import type { MetricsQuery } from "./metrics";

/**
 * Issue 54: of the operations verified by their canonical read (and not changed by a
 * correction), how many rest on the object's presence only: the intent named no fingerprint, so
 * no content was compared. Same period (the call's time) and filters as /metrics. Read from
 * operation_views through its (outcome, created_seq) index: it visits the verified rows.
 */
export async function presenceOnlyVerified(query: MetricsQuery): Promise<{ presence_only: number; verified: number }> {
  const q = asSql(await reader());
  const where = ["outcome = 'verified'", "effective_outcome = 'verified'"];
  const params: unknown[] = [];
  const add = (sql: (p: string) => string, v: unknown) => {
    params.push(v);
    where.push(sql(ph(params.length)));
  };
  if (query.since) add((p) => `called_at >= ${p}`, query.since);
  if (query.until) add((p) => `called_at < ${p}`, query.until);
  if (query.tool) add((p) => `tool = ${p}`, query.tool);
  if (query.agent) add((p) => `agent = ${p}`, query.agent);
  const [row] = await q.all<{ verified: number | bigint; presence_only: number | bigint | null }>(
    `SELECT COUNT(*) AS verified, SUM(CASE WHEN fingerprint IS NULL THEN 1 ELSE 0 END) AS presence_only FROM operation_views WHERE ${where.join(" AND ")}`,
    params,
  );
  return { verified: Number(row?.verified ?? 0), presence_only: Number(row?.presence_only ?? 0) };
}
