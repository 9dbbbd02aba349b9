import "server-only";
import { isPossibleOperationId } from "@/lib/domain/wire";
import { analyzeTrajectory } from "@/lib/domain/trajectory";
import { reader } from "../db/db";
import { OF_OPERATIONS } from "../chain/chain";
import { selectIn } from "../db/sql";

const MAX_STEPS = 1000;

/** A trajectory's operations in the order they were recorded, with their dependency analysis. */
export async function getTrajectory(trajectoryId: string) {
  if (!isPossibleOperationId(trajectoryId)) return null;
  const db = await reader();
  const views = await db.operationView.findMany({ where: { trajectoryId }, orderBy: { createdSeq: "asc" }, take: MAX_STEPS });
  if (!views.length) return null;
  const ids = views.map((v) => v.operationId);
  const edges = await db.operationEdge.findMany({ where: { operationId: { in: ids } } });
  const deps = new Map<string, string[]>();
  for (const e of edges) deps.set(e.operationId, [...(deps.get(e.operationId) ?? []), e.dependsOn]);
  const effects = await intendedEffects(ids);
  const steps = views.map((v) => ({
    operation_id: v.operationId,
    tool: v.tool,
    target: v.target,
    effect: effects.get(v.operationId) ?? null,
    effective_outcome: v.effectiveOutcome,
    outcome: v.outcome,
    reason: v.reason,
    review: v.review,
    failure_category: v.failureCategory,
    claimed_outcome: v.claimedOutcome,
    created_at: v.createdAt,
    depends_on: deps.get(v.operationId) ?? [],
  }));
  const analysis = analyzeTrajectory(steps.map((s) => ({ id: s.operation_id, outcome: s.effective_outcome, depends_on: s.depends_on })));
  return { trajectory_id: trajectoryId, steps, truncated: views.length === MAX_STEPS, ...analysis };
}

/** Each operation's intended effect (its intent stage's `effect`), for those that recorded one. */
async function intendedEffects(ids: string[]): Promise<Map<string, string>> {
  const db = await reader();
  const rows = await selectIn<{ operation_id: string; payload: string }>(
    db,
    // No `kind = 'stage'` (only stage records have a stage): with it SQLite planned on the
    // (kind, seq) index and walked every stage record (175 ms at 100,000 operations in bench:ui).
    `SELECT operation_id, payload FROM chain_records WHERE stage = 'intent' AND ${OF_OPERATIONS}`,
    ids,
  );
  const out = new Map<string, string>();
  for (const r of rows) {
    const effect = (JSON.parse(r.payload) as { data?: { effect?: unknown } }).data?.effect;
    if (typeof effect === "string" && !out.has(r.operation_id)) out.set(r.operation_id, effect);
  }
  return out;
}

/** Above this many steps a trajectory's tainted steps are not counted in the list (its page still analyses the first 1,000). */
const MAX_COUNTED_STEPS = 1000;

/**
 * How many steps of each trajectory rest on an unverified premise (analyzeTrajectory), for
 * trajectories of at most MAX_COUNTED_STEPS steps; null for longer ones.
 */
async function taintedCounts(sizes: Map<string, number>): Promise<Map<string, number | null>> {
  const db = await reader();
  const counted = [...sizes].filter(([, n]) => n <= MAX_COUNTED_STEPS).map(([id]) => id);
  const out = new Map<string, number | null>([...sizes.keys()].map((id) => [id, null]));
  if (!counted.length) return out;
  const steps = await selectIn<{ operation_id: string; trajectory_id: string; effective_outcome: string }>(
    db,
    "SELECT operation_id, trajectory_id, effective_outcome FROM operation_views WHERE trajectory_id IN %IN%",
    counted,
  );
  const edges = await selectIn<{ operation_id: string; depends_on: string }>(
    db,
    "SELECT operation_id, depends_on FROM operation_edges WHERE operation_id IN %IN%",
    steps.map((s) => s.operation_id),
  );
  const deps = new Map<string, string[]>();
  for (const e of edges) deps.set(e.operation_id, [...(deps.get(e.operation_id) ?? []), e.depends_on]);
  const byTrajectory = new Map<string, { id: string; outcome: string; depends_on: string[] }[]>();
  for (const s of steps) {
    const list = byTrajectory.get(s.trajectory_id) ?? [];
    list.push({ id: s.operation_id, outcome: s.effective_outcome, depends_on: deps.get(s.operation_id) ?? [] });
    byTrajectory.set(s.trajectory_id, list);
  }
  for (const id of counted) out.set(id, analyzeTrajectory(byTrajectory.get(id) ?? []).tainted.length);
  return out;
}

/** Trajectories, most recently active first, with how many steps need review and how many are tainted. */
export async function listTrajectories(limit = 100) {
  const db = await reader();
  // The most recently active trajectories: walk operations newest first (the created_seq index)
  // until `limit` distinct trajectories are seen, then count only those (the trajectory index).
  // A GROUP BY over every operation took seconds at a million operations (bench:ui).
  const latest = new Map<string, { createdSeq: number; createdAt: string }>();
  let before: number | undefined;
  const PAGE = 2000;
  while (latest.size < limit) {
    const page = await db.operationView.findMany({
      // No trajectory predicate: with one, SQLite plans on the trajectory index and sorts.
      where: before !== undefined ? { createdSeq: { lt: before } } : {},
      orderBy: { createdSeq: "desc" },
      select: { trajectoryId: true, createdSeq: true, createdAt: true },
      take: PAGE,
    });
    for (const v of page) {
      if (latest.size >= limit) break;
      if (v.trajectoryId !== null && !latest.has(v.trajectoryId)) latest.set(v.trajectoryId, { createdSeq: v.createdSeq, createdAt: v.createdAt });
    }
    if (page.length < PAGE) break;
    before = page[page.length - 1].createdSeq;
  }
  const ids = [...latest.keys()];
  // One pass over each trajectory's index entries: a separate `needs_review` count would let
  // SQLite plan on the needs_review index and read every operation that needs review.
  const counts = await selectIn<{ trajectory_id: string; steps: number | bigint; review: number | bigint | null }>(
    db,
    "SELECT trajectory_id, count(*) AS steps, sum(CASE WHEN needs_review THEN 1 ELSE 0 END) AS review FROM operation_views WHERE trajectory_id IN %IN% GROUP BY trajectory_id",
    ids,
  );
  const byId = new Map(counts.map((c) => [c.trajectory_id, c]));
  const tainted = await taintedCounts(new Map(ids.map((id) => [id, Number(byId.get(id)?.steps ?? 0)])));
  return ids.map((id) => ({
    trajectory_id: id,
    steps: Number(byId.get(id)?.steps ?? 0),
    needs_review: Number(byId.get(id)?.review ?? 0),
    tainted: tainted.get(id) ?? null,
    last_at: latest.get(id)!.createdAt,
  }));
}
