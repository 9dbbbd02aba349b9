import { describe, expect, it } from "vitest";
import { ingest, principal, unique } from "@/lib/testing/integration";

/** Trajectories from the real database (SQLite and PostgreSQL): steps with target and effect, tainted counts in the list. */
describe("trajectories", () => {
  it("counts the steps that rest on an unverified premise, and gives each step its target and intended effect", async () => {
    const sender = await principal("reviewer", ["ingest", "verify", "read"]);
    const run = unique("run");
    const at = "2026-08-28T10:00:00Z";
    const step = (id: string, verified: boolean, depends: string[] = []) => ({
      operation_id: id,
      trajectory_id: run,
      tool: "db.insert",
      ...(depends.length ? { depends_on: depends } : {}),
      intent: { target: `row ${id}`, effect: `create ${id}`, params: { id }, observed_at: at },
      receipt: { status: "accepted", observed_at: at },
      ...(verified ? { canonical_read: { status: "match", observed_at: at } } : {}),
    });
    const a = `${run}-a`;
    const b = `${run}-b`;
    const c = `${run}-c`;
    const d = `${run}-d`;
    for (const r of [step(a, false), step(b, true, [a]), step(c, true, [b]), step(d, true)]) {
      const res = await ingest(sender.token, r);
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    }
    const { getTrajectory, listTrajectories } = await import("./get-trajectory");
    const t = await getTrajectory(run);
    expect(t?.steps.map((s) => [s.operation_id, s.target, s.effect])).toEqual([
      [a, `row ${a}`, `create ${a}`],
      [b, `row ${b}`, `create ${b}`],
      [c, `row ${c}`, `create ${c}`],
      [d, `row ${d}`, `create ${d}`],
    ]);
    expect(t?.tainted).toEqual([b, c]);
    const listed = (await listTrajectories()).find((x) => x.trajectory_id === run);
    expect(listed).toMatchObject({ steps: 4, tainted: 2 });
  });
});
