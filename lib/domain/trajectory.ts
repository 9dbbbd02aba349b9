/**
 * The paper's Proposition 1: a step built on an unverified premise inherits its doubt. Given
 * a trajectory's operations in order with their dependencies, find every step that relies
 * (directly or through others) on an unverified one, and the first unverified step that later
 * steps relied on — where the trajectory went wrong.
 */
export type TrajectoryNode = { id: string; outcome: string; depends_on: string[] };

export type TrajectoryAnalysis = {
  /** The earliest unverified step that some later step depends on, or null. */
  first_unverified_premise: string | null;
  /** Every step that depends, directly or transitively, on an unverified step. */
  tainted: string[];
  /** For each tainted step, the unverified steps it rests on. */
  tainted_by: Record<string, string[]>;
};

const settled = (outcome: string) => outcome === "verified";

export function analyzeTrajectory(nodes: TrajectoryNode[]): TrajectoryAnalysis {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const memo = new Map<string, Set<string>>();
  // The unverified steps a node rests on (its own doubt excluded), following depends_on.
  const roots = (id: string, seen = new Set<string>()): Set<string> => {
    if (memo.has(id)) return memo.get(id)!;
    const out = new Set<string>();
    if (seen.has(id)) return out; // a cycle in client-sent data: stop, never loop
    seen.add(id);
    for (const dep of byId.get(id)?.depends_on ?? []) {
      const node = byId.get(dep);
      if (!node) continue;
      if (!settled(node.outcome)) out.add(dep);
      for (const r of roots(dep, seen)) out.add(r);
    }
    memo.set(id, out);
    return out;
  };
  const taintedBy: Record<string, string[]> = {};
  const premises = new Set<string>();
  for (const n of nodes) {
    const r = roots(n.id);
    if (r.size) {
      taintedBy[n.id] = [...r];
      for (const p of r) premises.add(p);
    }
  }
  return {
    first_unverified_premise: nodes.find((n) => premises.has(n.id))?.id ?? null,
    tainted: nodes.filter((n) => taintedBy[n.id]).map((n) => n.id),
    tainted_by: taintedBy,
  };
}
