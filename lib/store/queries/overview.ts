import "server-only";
import { EFFECTIVE_OUTCOMES, type EffectiveOutcome } from "@/lib/domain/outcomes";
import { reader } from "../db/db";
import { asSql, placeholder as ph, type Sql } from "../db/sql";

/*
 * The overview reads outcome_rollups and metric_rollups (kept by writeProjection in the same
 * transactions as operation_views): a few rows per day instead of every operation, so the page
 * costs the same at a million operations as at a hundred. Every figure counts an operation on
 * the day of its call (called_at: the receipt's time, else when it was recorded), the one clock
 * of the product's figures, as /metrics and the review queue. Periods start at a UTC midnight
 * (periodStart); a start inside a day is also answered exactly, that day's part from
 * operation_views through its called_at index.
 */

const DAY_MS = 86_400_000;

/** The UTC day of an instant, and whether the instant is that day's first millisecond. */
function dayOf(since: string): { day: string; whole: boolean; next: string } {
  const day = since.slice(0, 10);
  const next = new Date(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS).toISOString();
  return { day, whole: since === `${day}T00:00:00.000Z`, next };
}

/**
 * Rollup rows from `since` on: whole days from the rollup, and when `since` falls inside a day,
 * that day's part from operation_views (`partial` gives its SQL and parameters for `since` and
 * the next midnight). Both queries return the same columns.
 *
 * On SQLite a placeholder is a plain `?`, bound in the order it appears in the text, so `partial`
 * must list its parameters in that order (PostgreSQL's `$n` would forgive a mismatch; SQLite binds
 * the wrong values silently).
 */
async function fromDay<T>(
  q: Sql,
  since: string | undefined,
  rollup: (dayFilter: string) => string,
  partial: string | ((since: string, next: string) => { sql: string; params: unknown[] }),
): Promise<T[]> {
  if (!since) return q.all<T>(rollup(""));
  const { day, whole, next } = dayOf(since);
  if (whole) return q.all<T>(rollup(`day >= ${ph(1)}`), [day]);
  const part = typeof partial === "string" ? { sql: partial, params: [since, next] } : partial(since, next);
  const [days, rows] = await Promise.all([q.all<T>(rollup(`day > ${ph(1)}`), [day]), q.all<T>(part.sql, part.params)]);
  return [...rows, ...days];
}

const and = (filter: string) => (filter ? `AND ${filter}` : "");

/** Operations per effective outcome, and how many need review, called since `since`. */
export async function outcomeCounts(since?: string): Promise<{ byOutcome: Record<EffectiveOutcome, number>; needsReview: number; total: number }> {
  const q = asSql(await reader());
  const rows = await fromDay<{ effective_outcome: string; needs_review: boolean | number; n: number | bigint }>(
    q,
    since,
    (f) => `SELECT effective_outcome, needs_review, SUM(operations) AS n FROM outcome_rollups WHERE operations <> 0 ${and(f)} GROUP BY effective_outcome, needs_review`,
    `SELECT effective_outcome, needs_review, COUNT(*) AS n FROM operation_views WHERE called_at >= ${ph(1)} AND called_at < ${ph(2)} GROUP BY effective_outcome, needs_review`,
  );
  const byOutcome = Object.fromEntries(EFFECTIVE_OUTCOMES.map((o) => [o, 0])) as Record<EffectiveOutcome, number>;
  let needsReview = 0;
  for (const r of rows) {
    byOutcome[r.effective_outcome as EffectiveOutcome] += Number(r.n);
    if (r.needs_review) needsReview += Number(r.n);
  }
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

/**
 * The review queue's counts: what needs a person, by effective outcome (a rejected one needs a
 * person only while its agent's success claim stands), and overclaimed successes.
 */
export async function reviewCounts(): Promise<{ total: number; uncertain: number; divergent: number; rejected: number; overclaimed: number }> {
  const q = asSql(await reader());
  const rows = await q.all<{ effective_outcome: string; overclaimed: boolean | number; n: number | bigint }>(
    "SELECT effective_outcome, overclaimed, SUM(operations) AS n FROM outcome_rollups WHERE needs_review GROUP BY effective_outcome, overclaimed",
  );
  const sum = (keep: (r: (typeof rows)[number]) => boolean) => rows.filter(keep).reduce((a, r) => a + Number(r.n), 0);
  return {
    total: sum(() => true),
    uncertain: sum((r) => r.effective_outcome === "uncertain"),
    divergent: sum((r) => r.effective_outcome === "divergent"),
    rejected: sum((r) => r.effective_outcome === "rejected"),
    overclaimed: sum((r) => Boolean(r.overclaimed)),
  };
}

/**
 * The paper's silent-failure rate (Metric 2, docs/DOMAIN.md "The paper's metrics") per day of the call: accepted
 * receipts whose effect did not hold, as a share of accepted receipts whose effect is known
 * (held or not); `unknown` counts the accepted ones not known yet (uncertain, not resolved).
 * The same facts and the same clock as /metrics, so the two pages give one number for a period.
 */
export async function silentFailureRate(since: string): Promise<{ day: string; accepted: number; silent: number; unknown: number; rate: number }[]> {
  const q = asSql(await reader());
  const rows = await fromDay<{ day: string; actual: string; n: number | bigint }>(
    q,
    since,
    (f) => `SELECT day, actual, SUM(operations) AS n FROM metric_rollups WHERE accepted AND operations <> 0 ${and(f)} GROUP BY day, actual`,
    `SELECT substr(called_at, 1, 10) AS day, actual, COUNT(*) AS n FROM operation_views
      WHERE called_at >= ${ph(1)} AND called_at < ${ph(2)} AND receipt_status = 'accepted' GROUP BY 1, 2`,
  );
  const days = new Map<string, { silent: number; held: number; unknown: number }>();
  for (const r of rows) {
    const d = days.get(r.day) ?? { silent: 0, held: 0, unknown: 0 };
    const n = Number(r.n);
    if (r.actual === "not_held") d.silent += n;
    else if (r.actual === "held") d.held += n;
    else d.unknown += n;
    days.set(r.day, d);
  }
  return [...days]
    .filter(([, d]) => d.silent + d.held + d.unknown > 0)
    .map(([day, d]) => {
      const accepted = d.silent + d.held;
      return { day, accepted, silent: d.silent, unknown: d.unknown, rate: accepted ? d.silent / accepted : 0 };
    })
    .sort((a, b) => (a.day < b.day ? -1 : 1));
}

/** Tools ranked by how many of their operations are divergent now (ties by name). */
export async function topDivergentTools(since: string | undefined, take = 5): Promise<{ tool: string; divergent: number }[]> {
  const q = asSql(await reader());
  const rows = await fromDay<{ tool: string; n: number | bigint }>(
    q,
    since,
    (f) => `SELECT tool, SUM(operations) AS n FROM outcome_rollups WHERE effective_outcome = 'divergent' AND tool <> '' ${and(f)} GROUP BY tool`,
    `SELECT tool, COUNT(*) AS n FROM operation_views WHERE effective_outcome = 'divergent' AND tool IS NOT NULL AND called_at >= ${ph(1)} AND called_at < ${ph(2)} GROUP BY tool`,
  );
  const byTool = new Map<string, number>();
  for (const r of rows) byTool.set(r.tool, (byTool.get(r.tool) ?? 0) + Number(r.n));
  return [...byTool]
    .filter(([, n]) => n > 0)
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .slice(0, take)
    .map(([tool, divergent]) => ({ tool, divergent }));
}

/** The start of "the last `days` days": today (UTC) and the days before it, from midnight. */
export function periodStart(days: number, now = Date.now()): string {
  return `${new Date(now - (days - 1) * DAY_MS).toISOString().slice(0, 10)}T00:00:00.000Z`;
}

/** Whether the project holds any operation at all (an empty one's overview says how to send to it). */
export async function hasOperations(): Promise<boolean> {
  return (await (await reader()).operationView.findFirst({ select: { createdSeq: true } })) !== null;
}
