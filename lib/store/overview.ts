import "server-only";
import { EFFECTIVE_OUTCOMES, type EffectiveOutcome } from "@/lib/domain/outcomes";
import { REASONS } from "@/lib/domain/outcomes";
import { provider, reader } from "./db";

/** Operations per effective outcome, and how many need review, from the projection. */
export async function outcomeCounts(since?: string): Promise<{ byOutcome: Record<EffectiveOutcome, number>; needsReview: number; total: number }> {
  const db = await reader();
  const where = since ? { createdAt: { gte: since } } : {};
  const [groups, needsReview] = await Promise.all([
    db.operationView.groupBy({ by: ["effectiveOutcome"], where, _count: { _all: true } }),
    db.operationView.count({ where: { ...where, needsReview: true } }),
  ]);
  const byOutcome = Object.fromEntries(EFFECTIVE_OUTCOMES.map((o) => [o, 0])) as Record<EffectiveOutcome, number>;
  for (const g of groups) byOutcome[g.effectiveOutcome as EffectiveOutcome] = g._count._all;
  return { byOutcome, needsReview, total: Object.values(byOutcome).reduce((a, b) => a + b, 0) };
}

/** Tool names seen, for the filter menu. */
export async function knownTools(): Promise<string[]> {
  const db = await reader();
  // A loose index scan: one index seek per distinct tool on (tool, created_seq), instead of a
  // GROUP BY that reads every entry (bench:ui at a million operations: ~50 ms on SQLite, ~700 ms
  // on PostgreSQL, which has no skip scan). The same SQL runs on both databases.
  const rows = (await db.$queryRawUnsafe(
    `WITH RECURSIVE t(tool, n) AS (
       SELECT (SELECT min(tool) FROM operation_views), 1
       UNION ALL
       SELECT (SELECT min(tool) FROM operation_views WHERE tool > t.tool), t.n + 1 FROM t WHERE t.tool IS NOT NULL AND t.n < 500
     )
     SELECT tool FROM t WHERE tool IS NOT NULL`,
  )) as { tool: string }[];
  return rows.map((r) => r.tool);
}

/** The review queue's counts: what needs a person, by effective outcome, and overclaimed successes. */
export async function reviewCounts(): Promise<{ total: number; uncertain: number; divergent: number; overclaimed: number }> {
  const db = await reader();
  const [groups, overclaimed] = await Promise.all([
    db.operationView.groupBy({ by: ["effectiveOutcome"], where: { needsReview: true }, _count: { _all: true } }),
    db.operationView.count({ where: { needsReview: true, overclaimed: true } }),
  ]);
  const n = (o: string) => groups.find((g) => g.effectiveOutcome === o)?._count._all ?? 0;
  return { total: groups.reduce((a, g) => a + g._count._all, 0), uncertain: n("uncertain"), divergent: n("divergent"), overclaimed };
}

/**
 * The paper's silent-failure rate per day (by when the receipt says the call happened):
 * accepted receipts whose deciding canonical read found the effect absent or conflicting, as a
 * share of accepted receipts.
 */
export async function silentFailureRate(since: string): Promise<{ day: string; accepted: number; silent: number; rate: number }[]> {
  const db = await reader();
  const p = provider() === "postgresql" ? ["$1", "$2", "$3"] : ["?", "?", "?"];
  const rows = (await db.$queryRawUnsafe(
    `SELECT substr(receipt_at, 1, 10) AS day,
            SUM(CASE WHEN receipt_status = 'accepted' THEN 1 ELSE 0 END) AS accepted,
            SUM(CASE WHEN receipt_status = 'accepted' AND reason IN (${p[0]}, ${p[1]}) THEN 1 ELSE 0 END) AS silent
       FROM operation_views WHERE receipt_at >= ${p[2]} GROUP BY substr(receipt_at, 1, 10) ORDER BY day`,
    REASONS.absent,
    REASONS.mismatch,
    since,
  )) as { day: string; accepted: number | bigint; silent: number | bigint }[];
  return rows.map((r) => {
    const accepted = Number(r.accepted);
    const silent = Number(r.silent);
    return { day: r.day, accepted, silent, rate: accepted ? silent / accepted : 0 };
  });
}

/** Tools ranked by how many of their operations are divergent now. */
export async function topDivergentTools(since: string | undefined, take = 5): Promise<{ tool: string; divergent: number }[]> {
  const db = await reader();
  const rows = await db.operationView.groupBy({
    by: ["tool"],
    where: { effectiveOutcome: "divergent", tool: { not: null }, ...(since ? { createdAt: { gte: since } } : {}) },
    _count: { _all: true },
    orderBy: { _count: { tool: "desc" } },
    take,
  });
  return rows.map((r) => ({ tool: r.tool!, divergent: r._count._all }));
}

/** The start of a period of `days` ending now, as the RFC 3339 text the projection stores. */
export function periodStart(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString();
}
