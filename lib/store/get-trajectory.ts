import "server-only";
import { isPossibleOperationId } from "@/lib/domain/wire";
import { analyzeTrajectory } from "@/lib/domain/trajectory";
import { reader } from "./db";

const MAX_STEPS = 1000;

/** A trajectory's operations in the order they were recorded, with their dependency analysis. */
export async function getTrajectory(trajectoryId: string) {
  if (!isPossibleOperationId(trajectoryId)) return null;
  const db = await reader();
  const views = await db.operationView.findMany({ where: { trajectoryId }, orderBy: { createdSeq: "asc" }, take: MAX_STEPS });
  if (!views.length) return null;
  const edges = await db.operationEdge.findMany({ where: { operationId: { in: views.map((v) => v.operationId) } } });
  const deps = new Map<string, string[]>();
  for (const e of edges) deps.set(e.operationId, [...(deps.get(e.operationId) ?? []), e.dependsOn]);
  const steps = views.map((v) => ({
    operation_id: v.operationId,
    tool: v.tool,
    target: v.target,
    effective_outcome: v.effectiveOutcome,
    outcome: v.outcome,
    reason: v.reason,
    failure_category: v.failureCategory,
    claimed_outcome: v.claimedOutcome,
    created_at: v.createdAt,
    depends_on: deps.get(v.operationId) ?? [],
  }));
  const analysis = analyzeTrajectory(steps.map((s) => ({ id: s.operation_id, outcome: s.effective_outcome, depends_on: s.depends_on })));
  return { trajectory_id: trajectoryId, steps, truncated: views.length === MAX_STEPS, ...analysis };
}

/** Trajectories, most recently active first, with how many steps need review. */
export async function listTrajectories(limit = 100) {
  const db = await reader();
  const groups = await db.operationView.groupBy({
    by: ["trajectoryId"],
    where: { trajectoryId: { not: null } },
    _count: { _all: true },
    _max: { createdSeq: true, createdAt: true },
    orderBy: { _max: { createdSeq: "desc" } },
    take: limit,
  });
  const review = await db.operationView.groupBy({
    by: ["trajectoryId"],
    where: { trajectoryId: { in: groups.map((g) => g.trajectoryId!) }, needsReview: true },
    _count: { _all: true },
  });
  return groups.map((g) => ({
    trajectory_id: g.trajectoryId!,
    steps: g._count._all,
    needs_review: review.find((r) => r.trajectoryId === g.trajectoryId)?._count._all ?? 0,
    last_at: g._max.createdAt,
  }));
}
