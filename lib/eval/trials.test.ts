import { describe, expect, it } from "vitest";
import { passHatKCurve } from "@/lib/domain/pass-k";
import { INDEX_LAG } from "./arms";
import { passKSvg } from "./plot";
import { makeTasks, TASK_KINDS, type Task } from "./tasks";
import { passKTable, runTrials, trialSeed } from "./trials";
import { World, type Intent } from "./world";

const task = (id: string, steps: Omit<Intent, "key">[]): Task => ({ id, kind: "compound", steps: steps.map((s, i) => ({ ...s, key: `${id}-s${i}` })) });

describe("a trial passes when the environment's final state equals the task's goal state", () => {
  const t = task("t00001", [
    { tool: "env.users.create", value: { amount: 1 } },
    { tool: "env.billing.charge_and_notify", value: { amount: 2 } },
  ]);
  const other = task("t00002", [{ tool: "env.files.write", value: { amount: 3 } }]);

  it("every step's value in every backend its tool names, nothing else under the task's keys", () => {
    const w = new World(INDEX_LAG);
    expect(w.tasksAtGoal([t, other])).toEqual(new Set()); // nothing done
    w.call(t.steps[0], "none");
    w.call(t.steps[1], "partial"); // the ledger only
    expect(w.tasksAtGoal([t])).toEqual(new Set());
    w.call(t.steps[1], "none"); // the retry writes both
    w.call(other.steps[0], "none");
    expect(w.tasksAtGoal([t, other])).toEqual(new Set(["t00001", "t00002"]));
    // The primary counts, not a lagging reader; another task's state does not.
    w.call(other.steps[0], "wrong_params");
    expect(w.tasksAtGoal([t, other])).toEqual(new Set(["t00001"]));
  });

  it("a misrouted write left behind fails the task even when a retry then lands", () => {
    const w = new World(INDEX_LAG);
    w.call(other.steps[0], "wrong_tool");
    w.call(other.steps[0], "none");
    expect(w.holds(other.steps[0])).toBe(true);
    expect(w.tasksAtGoal([other])).toEqual(new Set());
  });

  it("a single-backend partial write is not the goal, even with the right key", () => {
    const w = new World(INDEX_LAG);
    w.call(other.steps[0], "partial");
    expect(w.tasksAtGoal([other])).toEqual(new Set());
  });
});

describe("pass^k trials (in-process)", () => {
  it("trial 0 is the single run's seed, the others derived and distinct", () => {
    const seeds = Array.from({ length: 8 }, (_, i) => trialSeed(11, i));
    expect(seeds[0]).toBe(11);
    expect(new Set(seeds).size).toBe(8);
    expect(trialSeed(11, 3)).toBe(seeds[3]);
  });

  it("is a function of the seed; the curves are the estimator over each task's passing trials", async () => {
    const tasks = makeTasks(3, 100);
    const a = await runTrials({ seed: 3, tasks, trials: 8 });
    const b = await runTrials({ seed: 3, tasks, trials: 8 });
    expect(b.curves).toEqual(a.curves);
    expect(a.curves.B.all).toEqual(passHatKCurve([...a.passing.B.values()], 8));
    expect(a.curves.A.compound).toEqual(passHatKCurve(tasks.filter((t) => t.kind === "compound").map((t) => a.passing.A.get(t.id)!), 8));
    expect(a.perTrial.A.reduce((x, y) => x + y, 0)).toBe([...a.passing.A.values()].reduce((x, y) => x + y, 0));
    // Different fault seeds give different trials.
    expect(new Set(a.perTrial.B).size).toBeGreaterThan(1);
    expect((await runTrials({ seed: 4, tasks, trials: 8 })).curves).not.toEqual(a.curves);
    // Some of arm B's failures are a stray write alone (a misrouted call nobody undid); never more than it failed.
    expect(a.strayOnly.B).toBeGreaterThan(0);
    expect(a.strayOnly.B).toBeLessThanOrEqual(8 * 100 - a.perTrial.B.reduce((x, y) => x + y, 0));
    expect(passKTable(a)).toHaveLength(1 + 2 * (1 + TASK_KINDS.length));
    await expect(runTrials({ seed: 3, tasks, trials: 0 })).rejects.toThrow(RangeError);
  });

  it("the plot: one line per arm and task kind, k = 1…n, on the chart's scale", async () => {
    const t = await runTrials({ seed: 3, tasks: makeTasks(3, 50), trials: 8 });
    const svg = passKSvg(t);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    const lines = [...svg.matchAll(/<polyline data-arm="(A|B)" data-kind="(\w+)"[^>]* points="([^"]+)"\/>/g)];
    expect(lines.map((l) => `${l[1]}/${l[2]}`).sort()).toEqual(["A", "B"].flatMap((arm) => ["all", ...TASK_KINDS].map((k) => `${arm}/${k}`)).sort());
    for (const [, arm, kind, pts] of lines) {
      const ys = pts.split(" ").map((p) => Number(p.split(",")[1]));
      expect(ys).toHaveLength(8);
      // y grows downwards: pass^k never rises, so y never falls; 100 % is the top line (40), 0 % the axis (392).
      const want = t.curves[arm as "A" | "B"][kind as "all"].map((v) => Number((40 + (1 - v!) * 352).toFixed(1)));
      expect(ys).toEqual(want);
    }
  });
});
