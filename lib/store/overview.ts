import "server-only";
import { EFFECTIVE_OUTCOMES, type EffectiveOutcome } from "@/lib/domain/outcomes";
import { reader } from "./db";

/** Operations per effective outcome, and how many need review, from the projection. */
export async function outcomeCounts(): Promise<{ byOutcome: Record<EffectiveOutcome, number>; needsReview: number; total: number }> {
  const db = await reader();
  const [groups, needsReview] = await Promise.all([
    db.operationView.groupBy({ by: ["effectiveOutcome"], _count: { _all: true } }),
    db.operationView.count({ where: { needsReview: true } }),
  ]);
  const byOutcome = Object.fromEntries(EFFECTIVE_OUTCOMES.map((o) => [o, 0])) as Record<EffectiveOutcome, number>;
  for (const g of groups) byOutcome[g.effectiveOutcome as EffectiveOutcome] = g._count._all;
  return { byOutcome, needsReview, total: Object.values(byOutcome).reduce((a, b) => a + b, 0) };
}

/** Tool names seen, for the filter menu. */
export async function knownTools(): Promise<string[]> {
  const db = await reader();
  const rows = await db.operationView.groupBy({ by: ["tool"], where: { tool: { not: null } }, orderBy: { tool: "asc" }, take: 500 });
  return rows.map((r) => r.tool!);
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
