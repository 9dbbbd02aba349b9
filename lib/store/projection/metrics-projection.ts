import "server-only";
import { claimOf, isDrawn, isRecovered, type MetricFacts, type RecoveryCandidate, type Review } from "@/lib/domain/metrics";
import type { OperationState } from "@/lib/domain/operation";
import type { Outcome } from "@/lib/domain/outcomes";
import { addToCounters, insertMany, insertManyIgnoringConflicts, placeholder, selectIn, type Sql } from "../db/sql";

/*
 * The paper's metrics in the projection (docs/DOMAIN.md "The paper's metrics", lib/domain/metrics.ts). Each
 * operation_views row carries its metric facts (actual, review, recovered, audit_sample, with
 * claimed_outcome, receipt_status and outcome already there); metric_rollups counts rows by
 * the day of the call (called_at: the one clock of every figure counted by day), tool, agent and
 * those facts, kept in the transaction that writes the rows, like outcome_rollups. Recovery is the one fact that depends on other operations: a failure is
 * recovered by a *later* operation, so writing one operation can change another's row; those
 * rows are updated here and counted out and in again.
 */

/** The view columns this module reads back (a view row from the database). */
export type MetricRow = {
  operation_id: string;
  created_seq: number | bigint;
  created_at: string;
  called_at: string;
  tool: string | null;
  agent: string | null;
  trajectory_id: string | null;
  fingerprint: string | null;
  claimed_outcome: string | null;
  receipt_status: string | null;
  kind: string;
  outcome: string;
  effective_outcome: string;
  actual: string;
  review: string;
  recovered: boolean | number;
  audit_sample: boolean | number;
};

const ROW_COLUMNS =
  "operation_id, created_seq, created_at, called_at, tool, agent, trajectory_id, fingerprint, claimed_outcome, receipt_status, kind, outcome, effective_outcome, actual, review, recovered, audit_sample";

/** The fields of a view row (viewRow() in projection.ts) that this module reads and sets. */
export type MetricView = {
  operationId: string;
  createdSeq: number;
  createdAt: string;
  /** When the call happened (the receipt's time, else when recorded): the day the rollups count it in. */
  calledAt: string;
  tool: string | null;
  agent: string | null;
  trajectoryId: string | null;
  fingerprint: string | null;
  claimedOutcome: string | null;
  receiptStatus: string | null;
  /** read | idempotent | write: a read's receipt is no write's success (Metric 2). */
  kind: string;
  outcome: string;
  effectiveOutcome: string;
  actual: string;
  review: string;
  recovered: boolean;
  auditSample: boolean;
  needsReview: boolean;
};

const toView = (r: MetricRow): MetricView => ({
  operationId: r.operation_id,
  createdSeq: Number(r.created_seq),
  createdAt: r.created_at,
  calledAt: r.called_at,
  tool: r.tool,
  agent: r.agent,
  trajectoryId: r.trajectory_id,
  fingerprint: r.fingerprint,
  claimedOutcome: r.claimed_outcome,
  receiptStatus: r.receipt_status,
  kind: r.kind,
  outcome: r.outcome,
  effectiveOutcome: r.effective_outcome,
  actual: r.actual,
  review: r.review,
  // SQLite hands booleans back as 0/1.
  recovered: Boolean(r.recovered),
  auditSample: Boolean(r.audit_sample),
  needsReview: false,
});

/** A view row's metric facts (the rollup's key, with day, tool and agent). */
export function factsOfView(v: MetricView): MetricFacts {
  return {
    claim: claimOf(v.claimedOutcome),
    actual: v.actual as MetricFacts["actual"],
    accepted: v.receiptStatus === "accepted" && v.kind !== "read",
    verdict: v.outcome as Outcome,
    review: v.review as Review,
    recovered: v.recovered,
    sampled: v.auditSample,
  };
}

/** An audit sample waits in the review queue until a reviewer acts on it. */
export function auditSampleWaiting(v: Pick<MetricView, "auditSample" | "review" | "effectiveOutcome">): boolean {
  return v.auditSample && v.review === "none" && v.effectiveOutcome === "verified";
}

/** The audit sampling rates by tool (those above 0). */
export async function readAuditRates(sql: Sql): Promise<Map<string, number>> {
  return new Map((await sql.all<{ tool: string; rate: number }>("SELECT tool, rate FROM audit_sampling WHERE rate > 0")).map((r) => [r.tool, Number(r.rate)]));
}

/**
 * Before the rows are written: draws audit samples (ingest only: a rebuild must not draw again
 * at today's rates) among operations verification calls verified, and marks the rows of every
 * sampled operation (audit_sample; in the review queue until a reviewer acts).
 */
export async function prepareMetricRows(tx: Sql, views: MetricView[], opts: { draw: boolean; now: string; fresh?: string[]; rates?: Map<string, number> }): Promise<void> {
  if (!views.length) return;
  // Operations this transaction creates have no sample but the ones drawn here: no need to ask.
  const fresh = new Set(opts.fresh ?? []);
  const sampled = new Set<string>();
  if (opts.draw) {
    const verified = views.filter((v) => v.outcome === "verified" && v.tool !== null);
    if (verified.length) {
      const rates = opts.rates ?? (await readAuditRates(tx));
      const drawn = verified.filter((v) => isDrawn(v.operationId, rates.get(v.tool!) ?? 0));
      if (drawn.length) {
        await insertManyIgnoringConflicts(
          tx,
          "audit_samples",
          ["operation_id", "tool", "rate", "drawn_at"],
          drawn.map((v) => [v.operationId, v.tool, rates.get(v.tool!), opts.now]),
          ["operation_id"],
        );
        for (const v of drawn) sampled.add(v.operationId);
      }
    }
  }
  const known = views.filter((v) => !fresh.has(v.operationId)).map((v) => v.operationId);
  if (known.length) for (const r of await selectIn<{ operation_id: string }>(tx, "SELECT operation_id FROM audit_samples WHERE operation_id IN %IN%", known)) sampled.add(r.operation_id);
  for (const v of views) {
    v.auditSample = sampled.has(v.operationId);
    if (auditSampleWaiting(v)) v.needsReview = true;
  }
}

/**
 * After the rows are written (provisionally not recovered): the `recovers` edges, every
 * affected failure's recovered flag, and metric_rollups (`removed`: the rows this write replaced).
 */
export async function finishMetricRows(
  tx: Sql,
  input: { views: MetricView[]; states: Map<string, OperationState>; removed: MetricRow[]; replacedIds: string[] },
): Promise<void> {
  const { views, states } = input;
  const removed = input.removed.map(toView);
  const oldEdges = input.replacedIds.length
    ? await selectIn<{ operation_id: string; recovers: string }>(tx, "DELETE FROM operation_recovers WHERE operation_id IN %IN% RETURNING operation_id, recovers", input.replacedIds)
    : [];
  const edges = views.flatMap((v) => (states.get(v.operationId)?.recovers ?? []).map((r) => [v.operationId, r]));
  await insertMany(tx, "operation_recovers", ["operation_id", "recovers"], edges);

  // Which failures may have changed: the batch's own, those the batch's verified operations
  // (before or after this write) name in recovers or share a trajectory with.
  const isFailure = (v: { outcome: string }) => v.outcome === "divergent" || v.outcome === "rejected";
  const recoverers = [...views, ...removed].filter((v) => v.effectiveOutcome === "verified");
  const targets = new Set<string>([...edges.map((e) => e[1]), ...oldEdges.filter((e) => recoverers.some((r) => r.operationId === e.operation_id)).map((e) => e.recovers)]);
  const keyed = [...recoverers, ...views.filter(isFailure)].filter((v) => v.trajectoryId !== null && v.tool !== null && v.fingerprint !== null);
  const batch = new Map(views.map((v) => [v.operationId, v]));
  const candidates = new Map<string, MetricView>(views.filter(isFailure).map((v) => [v.operationId, v]));
  const peers = new Map<string, MetricView>();
  if (keyed.length) {
    const trajectories = [...new Set(keyed.map((v) => v.trajectoryId!))];
    const fingerprints = new Set(keyed.map((v) => v.fingerprint!));
    // Both lists bound (a batch holds at most a few hundred of each): the trajectory index finds
    // the rows, the fingerprints keep only the ones that can matter.
    const fps = [...fingerprints];
    const rows: MetricRow[] = [];
    for (let i = 0; i < trajectories.length; i += 400) {
      const ts = trajectories.slice(i, i + 400);
      for (let j = 0; j < fps.length; j += 400) {
        const fs = fps.slice(j, j + 400);
        const list = (from: number, n: number) => `(${Array.from({ length: n }, (_, k) => placeholder(from + k)).join(", ")})`;
        rows.push(...(await tx.all<MetricRow>(`SELECT ${ROW_COLUMNS} FROM operation_views WHERE trajectory_id IN ${list(1, ts.length)} AND fingerprint IN ${list(ts.length + 1, fs.length)}`, [...ts, ...fs])));
      }
    }
    for (const r of rows) {
      const v = batch.get(r.operation_id) ?? toView(r);
      peers.set(v.operationId, v);
      if (isFailure(v) && !candidates.has(v.operationId)) candidates.set(v.operationId, v);
    }
  }
  const missing = [...targets].filter((id) => !candidates.has(id));
  if (missing.length) {
    for (const r of await selectIn<MetricRow>(tx, `SELECT ${ROW_COLUMNS} FROM operation_views WHERE operation_id IN %IN%`, missing)) {
      const v = batch.get(r.operation_id) ?? toView(r);
      if (isFailure(v)) candidates.set(v.operationId, v);
    }
  }
  const external: { before: MetricView; after: MetricView }[] = [];
  if (candidates.size) {
    // Operations naming a candidate in recovers, as they stand now (this write included).
    const named = await selectIn<{ target: string; operation_id: string; created_seq: number | bigint; effective_outcome: string }>(
      tx,
      "SELECT r.recovers AS target, y.operation_id, y.created_seq, y.effective_outcome FROM operation_recovers r JOIN operation_views y ON y.operation_id = r.operation_id WHERE r.recovers IN %IN%",
      [...candidates.keys()],
    );
    const namedBy = new Map<string, RecoveryCandidate[]>();
    for (const n of named) {
      const list = namedBy.get(n.target) ?? [];
      list.push({ operation_id: n.operation_id, created_seq: Number(n.created_seq), trajectory_id: null, tool: null, fingerprint: null, effective_outcome: n.effective_outcome, recovers: [n.target] });
      namedBy.set(n.target, list);
    }
    const asCandidate = (v: MetricView): RecoveryCandidate => ({
      operation_id: v.operationId,
      created_seq: v.createdSeq,
      trajectory_id: v.trajectoryId,
      tool: v.tool,
      fingerprint: v.fingerprint,
      effective_outcome: v.effectiveOutcome,
      recovers: [],
    });
    const peerList = [...peers.values()].map(asCandidate);
    const turnOn: string[] = [];
    const turnOff: string[] = [];
    for (const v of candidates.values()) {
      const now = isRecovered({ ...asCandidate(v), verdict: v.outcome as Outcome, review: v.review as Review }, [...peerList, ...(namedBy.get(v.operationId) ?? [])]);
      const inBatch = batch.has(v.operationId);
      // Rows of this batch were written provisionally not recovered.
      const stored = inBatch ? false : v.recovered;
      if (now !== stored) (now ? turnOn : turnOff).push(v.operationId);
      if (!inBatch && now !== v.recovered) external.push({ before: v, after: { ...v, recovered: now } });
      if (inBatch) v.recovered = now;
    }
    if (turnOn.length) await selectIn(tx, "UPDATE operation_views SET recovered = TRUE WHERE operation_id IN %IN% RETURNING operation_id", turnOn);
    if (turnOff.length) await selectIn(tx, "UPDATE operation_views SET recovered = FALSE WHERE operation_id IN %IN% RETURNING operation_id", turnOff);
  }
  await addToMetricRollups(tx, [...removed, ...external.map((e) => e.before)], [...views, ...external.map((e) => e.after)]);
}

const ROLLUP_KEYS = ["day", "tool", "agent", "claim", "actual", "accepted", "verdict", "review", "recovered", "sampled"];

export function rollupKey(v: MetricView): unknown[] {
  const f = factsOfView(v);
  return [v.calledAt.slice(0, 10), v.tool ?? "", v.agent ?? "", f.claim, f.actual, f.accepted, f.verdict, f.review, f.recovered, f.sampled];
}

async function addToMetricRollups(tx: Sql, removed: MetricView[], added: MetricView[]): Promise<void> {
  const rows = new Map<string, unknown[]>();
  const count = (v: MetricView, sign: 1 | -1) => {
    const key = rollupKey(v);
    const k = JSON.stringify(key);
    const row = rows.get(k) ?? [...key, 0];
    (row[ROLLUP_KEYS.length] as number) += sign;
    rows.set(k, row);
  };
  for (const v of removed) count(v, -1);
  for (const v of added) count(v, 1);
  const changed = [...rows.values()].filter((r) => r[ROLLUP_KEYS.length] !== 0);
  if (changed.length) await addToCounters(tx, "metric_rollups", ROLLUP_KEYS, ["operations"], changed);
}

/** Clears what rebuildProjections recreates (audit_samples stay: they are decisions, not derived). */
export async function clearMetricProjection(tx: Sql): Promise<void> {
  await tx.run("DELETE FROM metric_rollups");
  await tx.run("DELETE FROM operation_recovers");
}

