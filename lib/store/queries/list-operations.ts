import "server-only";
import { z } from "zod";
import { EFFECTIVE_OUTCOMES, OUTCOMES } from "@/lib/domain/outcomes";
import { receiptStatuses } from "@/lib/domain/wire";
import { textProblem } from "@/lib/domain/json";
import { normalizeInstant } from "@/lib/domain/time";
import { actInEffect, type StatusAct } from "@/lib/domain/status";
import type { Review } from "@/lib/domain/metrics";
import { OF_OPERATIONS } from "../chain/chain";
import { reader } from "../db/db";
import { selectIn } from "../db/sql";
import { METRIC_NAMES, METRIC_PARTS, metricWhere } from "./metric-filters";
import { rankedPage, searchOperations, searchSnippets } from "../projection/search-index";
import type { SnippetLine } from "@/lib/domain/search";

/** A text filter: non-empty, and text every database can compare (no NUL, no unpaired surrogate). */
const text = z
  .string()
  .min(1)
  .refine((v) => !textProblem(v), { error: (issue) => textProblem(issue.input as string) ?? "is not valid text" });

/**
 * A cursor is an operation's place in the chain (a seq). Seqs are 32-bit integers on
 * PostgreSQL, so a larger number was never returned, and comparing a column with it would fail.
 */
const MAX_SEQ = 2_147_483_647;
const cursorSchema = z
  .string()
  .regex(/^[0-9]{1,10}$/, "is not a cursor this API returned")
  .transform(Number)
  .refine((n) => n <= MAX_SEQ, "is not a cursor this API returned");

const instant = z.string().transform((v, ctx) => normalizeInstant(v) ?? (ctx.addIssue({ code: "custom", message: "must be an RFC 3339 date-time" }), z.NEVER));

/** Query parameters of GET /api/v1/operations, shared by the route and the pages. */
export const listQuerySchema = z
  .object({
    outcome: z.enum(EFFECTIVE_OUTCOMES).optional(),
    classified_as: z.enum(OUTCOMES).optional(),
    tool: text.max(200).optional(),
    target: text.max(200).optional(),
    agent: text.max(200).optional(),
    failure_category: z.enum(["1", "2", "3", "4", "5"]).transform(Number).optional(),
    overclaimed: z.enum(["true", "false"]).transform((v) => v === "true").optional(),
    /** Silent failures (Metric 2's hit): accepted receipts whose effect did not hold. */
    silent_failure: z.literal("true").optional(),
    trajectory_id: text.max(200).optional(),
    needs_review: z.enum(["true", "false"]).transform((v) => v === "true").optional(),
    q: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .refine((v) => !textProblem(v), { error: (issue) => textProblem(issue.input as string) ?? "is not valid text" })
      .optional(),
    since: instant.optional(),
    until: instant.optional(),
    /** The receipt's status (operations without a receipt match neither). */
    receipt_status: z.enum(receiptStatuses).optional(),
    /** When the call happened (called_at: the receipt's time, else when recorded), the clock of every figure counted by day. */
    called_since: instant.optional(),
    called_until: instant.optional(),
    /** More than 200 is answered with 200 (not refused): the refusal's words say what to send. */
    limit: z.coerce.number().int().min(1).default(50).transform((n) => Math.min(n, 200)).meta({ accepts: "a whole number from 1 to 200" }),
    cursor: cursorSchema.optional(),
    /** The operations behind one number of /metrics: a metric, and which part of it (metric-filters.ts). */
    metric: z.enum(METRIC_NAMES).optional(),
    part: z.enum(METRIC_PARTS).optional(),
    /** Drawn as audit samples. */
    audit_sample: z.enum(["true", "false"]).transform((v) => v === "true").optional(),
    /** newest (default) or oldest first; cursors page in the same direction. */
    order: z.enum(["newest", "oldest"]).default("newest"),
    /** By when it was recorded (default: its place in the chain) or when the call happened (called_at). */
    by: z.enum(["recorded", "called"]).default("recorded"),
    /** Only operations newer than this cursor (what arrived since a page was loaded). */
    newer_than: cursorSchema.optional(),
  })
  .strict()
  .superRefine((q, ctx) => {
    // Named by the parameter that was sent, so that the refusal points at something in the URL.
    if (q.metric !== undefined && q.part === undefined) ctx.addIssue({ code: "custom", path: ["metric"], message: "needs part= (hit, miss, n, unknown or samples)" });
    if (q.part !== undefined && q.metric === undefined) ctx.addIssue({ code: "custom", path: ["part"], message: "needs metric= (one of the five metrics)" });
  });
export type ListQuery = z.infer<typeof listQuerySchema>;

export type OperationListItem = {
  operation_id: string;
  /** The operation's place in the chain: what cursors are made of. */
  cursor: string;
  trajectory_id: string | null;
  tool: string | null;
  agent: string | null;
  target: string | null;
  claimed_outcome: string | null;
  receipt_status: string | null;
  receipt_id: string | null;
  outcome: string;
  reason: string;
  failure_category: number | null;
  effective_outcome: string;
  /** The reviewer's act in effect: none, verified, not_applied, compensated (a resolve) or retracted (a withdrawn success claim). */
  review: string;
  needs_review: boolean;
  overclaimed: boolean;
  /** Drawn as an audit sample (in the review queue as such until a reviewer acts). */
  audit_sample: boolean;
  /** When the receipt says the call happened (UTC), if it said. */
  receipt_at: string | null;
  /** When the call happened: the receipt's time, else created_at (an intent carries no time). */
  called_at: string;
  created_at: string;
  updated_at: string;
  /** With `q`: where the search matched (up to two "label: value" lines, the matching words marked). */
  match?: SnippetLine[];
};

/**
 * How many matching operations a free-text search considers (Prisma binds them as parameters,
 * and SQLite allows 999). A broader search says so (`search_capped`): refine it.
 */
export const SEARCH_KEY_LIMIT = 500;

/**
 * Newest first, keyset-paginated on the operation's place in the chain (created_seq). With `q`
 * (search-index.ts): the matching operations, best match first (newest first among equals),
 * paged after the last row's created_seq; `order=oldest` or `by=called` keeps them in that order.
 */
export async function listOperations(query: ListQuery, only?: string[]): Promise<{ items: OperationListItem[]; next_cursor: string | null; search_capped?: true }> {
  const db = await reader();
  // `only`: these operations at most (the review queue's "assigned to me"; at most SEARCH_KEY_LIMIT).
  let idFilter: string[] | undefined = only;
  if (idFilter && !idFilter.length) return { items: [], next_cursor: null };
  let capped = false;
  let search: Awaited<ReturnType<typeof searchOperations>> | null = null;
  if (query.q) {
    search = await searchOperations(db, query.q, SEARCH_KEY_LIMIT, only);
    idFilter = search.ids;
    if (!idFilter.length) return { items: [], next_cursor: null };
    capped = search.capped;
  }
  // The operations a search or `only` allows, named by their place in the chain: SQLite plans
  // `created_seq IN (…)` as point lookups in another filter's (column, created_seq) index; given
  // `operation_id IN (…)` beside such a filter it walked that filter's whole index instead
  // (bench:ui, a word + outcome=divergent at a million operations: p95 421 ms).
  let seqFilter: number[] | undefined;
  if (idFilter) {
    seqFilter = (await db.operation.findMany({ where: { operationId: { in: idFilter } }, select: { createdSeq: true } })).map((r) => r.createdSeq);
    if (!seqFilter.length) return { items: [], next_cursor: null };
  }
  // Ranked by relevance: a search in the default order (newest, by recorded).
  const ranked = search !== null && query.order === "newest" && query.by === "recorded";
  // By call time, a cursor (an operation's seq) stands for its (called_at, seq): rows after it in
  // that order. An operation the cursor names that is gone ends the paging (no rows after it).
  const asc = query.order === "oldest";
  let calledAfter: object | undefined;
  if (query.by === "called" && query.cursor !== undefined) {
    const at = await db.operationView.findUnique({ where: { createdSeq: query.cursor }, select: { calledAt: true } });
    if (!at) return { items: [], next_cursor: null };
    calledAfter = {
      OR: [{ calledAt: asc ? { gt: at.calledAt } : { lt: at.calledAt } }, { calledAt: at.calledAt, createdSeq: asc ? { gt: query.cursor } : { lt: query.cursor } }],
    };
  }
  const where = {
    ...(query.outcome ? { effectiveOutcome: query.outcome } : {}),
    ...(query.classified_as ? { outcome: query.classified_as } : {}),
    ...(query.tool ? { tool: query.tool } : {}),
    ...(query.target ? { target: query.target } : {}),
    ...(query.agent ? { agent: query.agent } : {}),
    ...(query.failure_category ? { failureCategory: query.failure_category } : {}),
    ...(query.overclaimed !== undefined ? { overclaimed: query.overclaimed } : {}),
    ...(query.trajectory_id ? { trajectoryId: query.trajectory_id } : {}),
    // Under AND: a metric's part (silent_failure is Metric 2's hit) brings its own ORs and ANDs,
    // and the receipt status must hold beside them.
    ...(query.receipt_status || query.metric || query.silent_failure || calledAfter
      ? {
          AND: [
            ...(query.receipt_status ? [{ receiptStatus: query.receipt_status }] : []),
            ...(query.metric && query.part ? [metricWhere(query.metric, query.part)] : []),
            ...(query.silent_failure ? [metricWhere("silent_failure_rate", "hit")] : []),
            ...(calledAfter ? [calledAfter] : []),
          ],
        }
      : {}),
    ...(query.called_since || query.called_until ? { calledAt: { ...(query.called_since ? { gte: query.called_since } : {}), ...(query.called_until ? { lt: query.called_until } : {}) } } : {}),
    ...(query.needs_review !== undefined ? { needsReview: query.needs_review } : {}),
    ...(query.audit_sample !== undefined ? { auditSample: query.audit_sample } : {}),
    ...(query.since || query.until ? { createdAt: { ...(query.since ? { gte: query.since } : {}), ...(query.until ? { lt: query.until } : {}) } } : {}),
    ...((query.cursor !== undefined && !ranked && !calledAfter) || query.newer_than !== undefined || seqFilter
      ? {
          createdSeq: {
            ...(seqFilter ? { in: seqFilter } : {}),
            ...(query.cursor !== undefined && !ranked && !calledAfter ? (asc ? { gt: query.cursor } : { lt: query.cursor }) : {}),
            ...(query.newer_than !== undefined ? { gt: query.newer_than } : {}),
          },
        }
      : {}),
  };
  let rows;
  if (ranked) {
    // Ranked: the candidates on two columns, then the page's rows in full (≤ 51 of up to 500).
    const keys = await db.operationView.findMany({ where, select: { operationId: true, createdSeq: true } });
    const order = rankedPage(keys, search!.ids, query.cursor, query.limit + 1);
    const full = new Map((await db.operationView.findMany({ where: { createdSeq: { in: order.map((k) => k.createdSeq) } } })).map((r) => [r.createdSeq, r]));
    rows = order.flatMap((k) => full.get(k.createdSeq) ?? []);
  } else {
    rows = await db.operationView.findMany({
      where,
      orderBy: query.by === "called" ? [{ calledAt: asc ? "asc" : "desc" }, { createdSeq: asc ? "asc" : "desc" }] : { createdSeq: asc ? "asc" : "desc" },
      take: query.limit + 1,
    });
  }
  const page = rows.slice(0, query.limit);
  const matches = search ? await searchSnippets(db, page.map((r) => r.createdSeq), search.parsed) : null;
  return {
    items: page.map((r) => ({
      operation_id: r.operationId,
      cursor: String(r.createdSeq),
      trajectory_id: r.trajectoryId,
      tool: r.tool,
      agent: r.agent,
      target: r.target,
      claimed_outcome: r.claimedOutcome,
      receipt_status: r.receiptStatus,
      receipt_id: r.receiptId,
      outcome: r.outcome,
      reason: r.reason,
      failure_category: r.failureCategory,
      effective_outcome: r.effectiveOutcome,
      review: r.review,
      needs_review: r.needsReview,
      overclaimed: r.overclaimed,
      audit_sample: r.auditSample,
      receipt_at: r.receiptAt,
      called_at: r.calledAt,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      ...(matches ? { match: matches.get(r.createdSeq) ?? [] } : {}),
    })),
    next_cursor: rows.length > query.limit ? String(page[page.length - 1].createdSeq) : null,
    ...(capped ? { search_capped: true as const } : {}),
  };
}

/**
 * Each operation's latest correction id (null: none), for a page that offers corrections on
 * many operations at once: each one names the correction it follows, as the single form does.
 */
export async function lastCorrectionsOf(ids: string[]): Promise<Map<string, string | null>> {
  if (!ids.length) return new Map();
  const rows = await (await reader()).operationView.findMany({ where: { operationId: { in: ids } }, select: { operationId: true, lastCorrectionId: true } });
  return new Map(rows.map((r) => [r.operationId, r.lastCorrectionId]));
}

/**
 * Who made the correction in effect on each corrected operation of a page, and when: what its
 * status line names (lib/domain/status.ts). Only operations with a reviewer's act are looked up.
 */
export async function correctionActsOf(items: { operation_id: string; review: string }[]): Promise<Map<string, StatusAct>> {
  const corrected = items.filter((i) => i.review !== "none");
  if (!corrected.length) return new Map();
  // `kind || ''`: an expression, so that SQLite plans on (op_seq, seq), not on (kind, seq) (see stage-records.ts).
  const rows = await selectIn<{ operation_id: string; kind: string; actor: string | null; recorded_at: string; payload: string }>(
    await reader(),
    `SELECT operation_id, kind, actor, recorded_at, payload FROM chain_records WHERE kind || '' = 'correction' AND ${OF_OPERATIONS} ORDER BY seq`,
    corrected.map((i) => i.operation_id),
  );
  const byOperation = new Map<string, { action: string; reviewer: string; recorded_at: string; withdraw_claim: boolean }[]>();
  for (const r of rows) {
    if (r.kind !== "correction") continue;
    const list = byOperation.get(r.operation_id) ?? [];
    const payload = JSON.parse(r.payload) as { action: string; withdraw_claim?: boolean };
    list.push({ action: payload.action, reviewer: r.actor ?? "a reviewer", recorded_at: r.recorded_at, withdraw_claim: payload.withdraw_claim === true });
    byOperation.set(r.operation_id, list);
  }
  const acts = new Map<string, StatusAct>();
  for (const i of corrected) {
    const act = actInEffect(i.review as Review, byOperation.get(i.operation_id) ?? []);
    if (act) acts.set(i.operation_id, { reviewer: act.reviewer, recorded_at: act.recorded_at, withdraw_claim: act.withdraw_claim });
  }
  return acts;
}

/**
 * The operations before and after this one in the review queue (oldest call first), for moving
 * through the queue from an operation's page; null at either end.
 */
export async function queueNeighbours(operationId: string): Promise<{ previous: string | null; next: string | null }> {
  const db = await reader();
  const me = await db.operationView.findUnique({ where: { operationId }, select: { createdSeq: true, calledAt: true } });
  if (!me) return { previous: null, next: null };
  // The queue's order: oldest call first, then place in the chain.
  const [previous, next] = await Promise.all([
    db.operationView.findFirst({
      where: { needsReview: true, OR: [{ calledAt: { lt: me.calledAt } }, { calledAt: me.calledAt, createdSeq: { lt: me.createdSeq } }] },
      orderBy: [{ calledAt: "desc" }, { createdSeq: "desc" }],
      select: { operationId: true },
    }),
    db.operationView.findFirst({
      where: { needsReview: true, OR: [{ calledAt: { gt: me.calledAt } }, { calledAt: me.calledAt, createdSeq: { gt: me.createdSeq } }] },
      orderBy: [{ calledAt: "asc" }, { createdSeq: "asc" }],
      select: { operationId: true },
    }),
  ]);
  return { previous: previous?.operationId ?? null, next: next?.operationId ?? null };
}
