import "server-only";
import { z } from "zod";
import { textProblem } from "@/lib/domain/json";
import { computeMetrics, type Actual, type Claim, type FactCount, type Metrics, type Review } from "@/lib/domain/metrics";
import type { Outcome } from "@/lib/domain/outcomes";
import { normalizeInstant } from "@/lib/domain/time";
import { reader } from "../db/db";
import { asSql, placeholder as ph, type Sql } from "../db/sql";

/*
 * The paper's Metrics 1–5 read from metric_rollups (kept by writeProjection, see
 * metrics-projection.ts): whole UTC days from the rollup, and the part of a day a period starts
 * or ends inside from operation_views through its called_at index. Periods are on the time of the
 * call (called_at: the receipt's time, else when it was recorded), the one clock of every figure
 * counted by day (the overview's too), as the operations list's called_since/called_until.
 */

const text = z
  .string()
  .min(1)
  .max(200)
  .refine((v) => !textProblem(v), { error: (issue) => textProblem(issue.input as string) ?? "is not valid text" });
const instant = z.string().transform((v, ctx) => normalizeInstant(v) ?? (ctx.addIssue({ code: "custom", message: "must be an RFC 3339 date-time" }), z.NEVER));

/** Query parameters of GET /api/v1/metrics (and the /metrics page). */
export const metricsQuerySchema = z
  .object({
    since: instant.optional(),
    until: instant.optional(),
    tool: text.optional(),
    agent: text.optional(),
  })
  .strict()
  .refine((q) => !q.since || !q.until || q.since <= q.until, { message: "since must not be after until", path: ["until"] });
export type MetricsQuery = z.infer<typeof metricsQuerySchema>;

type Row = {
  day: string;
  tool: string;
  agent: string;
  claim: string;
  actual: string;
  accepted: boolean | number;
  verdict: string;
  review: string;
  recovered: boolean | number;
  sampled: boolean | number;
  operations: number | bigint;
};

const DAY_MS = 86_400_000;
const midnight = (day: string) => `${day}T00:00:00.000Z`;
const nextDay = (day: string) => new Date(Date.parse(midnight(day)) + DAY_MS).toISOString().slice(0, 10);

/** The period as whole days [fromDay, toDay) for the rollup plus the partial pieces [a, b) around them. */
export function splitPeriod(since?: string, until?: string): { fromDay?: string; toDay?: string; partial: [string, string][] } {
  const partial: [string, string][] = [];
  let fromDay: string | undefined;
  let toDay: string | undefined;
  if (since) {
    const d = since.slice(0, 10);
    fromDay = since === midnight(d) ? d : nextDay(d);
    if (since !== midnight(d)) {
      const end = until && until < midnight(fromDay) ? until : midnight(fromDay);
      if (since < end) partial.push([since, end]);
    }
  }
  if (until) {
    const d = until.slice(0, 10);
    toDay = d;
    if (until !== midnight(d)) {
      const start = since && since > midnight(d) ? since : midnight(d);
      // Not the same piece as the since-part (since and until inside one day).
      if (start < until && !(since && since.slice(0, 10) === d)) partial.push([start, until]);
    }
  }
  return { fromDay, toDay, partial };
}

const FACT_COLUMNS = `CASE WHEN claimed_outcome IS NULL THEN 'none' WHEN claimed_outcome = 'success' THEN 'success' ELSE 'other' END AS claim,
  actual, CASE WHEN receipt_status = 'accepted' THEN 1 ELSE 0 END AS accepted, outcome AS verdict, review, recovered, audit_sample AS sampled`;

/** Rollup rows of the period (and filters), the partial days counted from operation_views. */
async function rows(q: Sql, query: MetricsQuery): Promise<Row[]> {
  const { fromDay, toDay, partial } = splitPeriod(query.since, query.until);
  const out: Row[] = [];
  // The rollup: placeholders are bound in the order they appear (SQLite's `?`).
  {
    const where: string[] = ["operations <> 0"];
    const params: unknown[] = [];
    const add = (sql: (p: string) => string, v: unknown) => {
      params.push(v);
      where.push(sql(ph(params.length)));
    };
    if (fromDay) add((p) => `day >= ${p}`, fromDay);
    if (toDay) add((p) => `day < ${p}`, toDay);
    if (query.tool) add((p) => `tool = ${p}`, query.tool);
    if (query.agent) add((p) => `agent = ${p}`, query.agent);
    if (!(fromDay && toDay && fromDay >= toDay)) {
      out.push(...(await q.all<Row>(`SELECT day, tool, agent, claim, actual, accepted, verdict, review, recovered, sampled, operations FROM metric_rollups WHERE ${where.join(" AND ")}`, params)));
    }
  }
  for (const [a, b] of partial) {
    const params: unknown[] = [a, b];
    let filter = "";
    if (query.tool) filter += ` AND tool = ${ph(params.push(query.tool))}`;
    if (query.agent) filter += ` AND agent = ${ph(params.push(query.agent))}`;
    out.push(
      ...(await q.all<Row>(
        `SELECT substr(called_at, 1, 10) AS day, COALESCE(tool, '') AS tool, COALESCE(agent, '') AS agent, ${FACT_COLUMNS}, COUNT(*) AS operations
           FROM operation_views WHERE called_at >= ${ph(1)} AND called_at < ${ph(2)}${filter}
          GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`,
        params,
      )),
    );
  }
  return out;
}

const toCount = (r: Row): FactCount => ({
  facts: {
    claim: r.claim as Claim,
    actual: r.actual as Actual,
    // SQLite hands booleans back as 0/1.
    accepted: Boolean(Number(r.accepted)),
    verdict: r.verdict as Outcome,
    review: r.review as Review,
    recovered: Boolean(Number(r.recovered)),
    sampled: Boolean(Number(r.sampled)),
  },
  count: Number(r.operations),
});

/** Monday (UTC) of the week a day falls in. */
export function weekOf(day: string): string {
  const t = Date.parse(midnight(day));
  const dow = (new Date(t).getUTCDay() + 6) % 7;
  return new Date(t - dow * DAY_MS).toISOString().slice(0, 10);
}

function groupBy(rs: Row[], key: (r: Row) => string): Map<string, Row[]> {
  const m = new Map<string, Row[]>();
  for (const r of rs) {
    const k = key(r);
    const list = m.get(k);
    if (list) list.push(r);
    else m.set(k, [r]);
  }
  return m;
}

export type MetricsReport = {
  since: string | null;
  until: string | null;
  tool: string | null;
  agent: string | null;
  operations: number;
  metrics: Metrics;
  by_tool: { tool: string | null; operations: number; metrics: Metrics }[];
  by_agent: { agent: string | null; operations: number; metrics: Metrics }[];
  /** Per week (Monday, UTC), oldest first. */
  weekly: { week: string; operations: number; metrics: Metrics }[];
  /** The audit sampling rates in force (tool → share of verified operations drawn). */
  sampling: { tool: string; rate: number }[];
};

const total = (rs: Row[]) => rs.reduce((a, r) => a + Number(r.operations), 0);

/** Metrics 1–5 for a period (and tool, agent), overall, per tool, per agent and per week. */
export async function readMetrics(query: MetricsQuery): Promise<MetricsReport> {
  const q = asSql(await reader());
  const [rs, sampling] = await Promise.all([rows(q, query), q.all<{ tool: string; rate: number }>("SELECT tool, rate FROM audit_sampling WHERE rate > 0 ORDER BY tool")]);
  const metricsOf = (list: Row[]) => computeMetrics(list.map(toCount));
  const named = (k: string) => (k === "" ? null : k);
  return {
    since: query.since ?? null,
    until: query.until ?? null,
    tool: query.tool ?? null,
    agent: query.agent ?? null,
    operations: total(rs),
    metrics: metricsOf(rs),
    by_tool: [...groupBy(rs, (r) => r.tool)].sort(([a], [b]) => (a < b ? -1 : 1)).map(([tool, list]) => ({ tool: named(tool), operations: total(list), metrics: metricsOf(list) })),
    by_agent: [...groupBy(rs, (r) => r.agent)].sort(([a], [b]) => (a < b ? -1 : 1)).map(([agent, list]) => ({ agent: named(agent), operations: total(list), metrics: metricsOf(list) })),
    weekly: [...groupBy(rs, (r) => weekOf(r.day))].sort(([a], [b]) => (a < b ? -1 : 1)).map(([week, list]) => ({ week, operations: total(list), metrics: metricsOf(list) })),
    sampling: sampling.map((s) => ({ tool: s.tool, rate: Number(s.rate) })),
  };
}
