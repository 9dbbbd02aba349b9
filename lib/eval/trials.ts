import { passHatKCurve } from "@/lib/domain/pass-k";
import { INDEX_LAG, MAX_ATTEMPTS, runArmA, runArmB } from "./arms";
import { renderMarkdown } from "./report";
import { seedOf, TASK_KINDS, type Task, type TaskKind } from "./tasks";
import { World } from "./world";

/**
 * Reliability across runs (issue 37): the same tasks run n times under different fault seeds;
 * a trial of a task passes when the environment's final state equals the task's goal state
 * (World.tasksAtGoal), and pass^k (lib/domain/pass-k.ts) is estimated per arm and task kind.
 */

/** Trial i's fault seed: trial 0 is the single run's own (--seed), the others derived from it. */
export const trialSeed = (seed: number, trial: number) => (trial === 0 ? seed : seedOf(seed, "trial", trial));

export type Arm = "A" | "B" | "C" | "D";
/** Per arm: A and B always, C (the gateway, issue 37 part 3) and D (with verifiers, issue 48) when they were run. */
export type PerArm<X> = Record<"A" | "B", X> & { C?: X; D?: X };
/** Runs one arm's agent over the tasks under a fault seed; returns the environment it left. */
export type ArmRunner = (faultSeed: number, trial: number) => Promise<World> | World;

export type Trials = {
  seed: number;
  trials: number;
  tasks: number;
  kinds: Record<TaskKind, number>;
  /** The arms run, in order. */
  arms: Arm[];
  /** Per arm: for each task, how many of the trials passed. */
  passing: PerArm<Map<string, number>>;
  /** Per arm: passing trials of all tasks in each trial (pass^1's numerator, trial by trial). */
  perTrial: PerArm<number[]>;
  /** Per arm, over all trials: failed trials whose every step's postcondition held, failed only by a stray write (a misrouted one) left behind. */
  strayOnly: PerArm<number>;
  /** Per arm and task kind (and "all"): pass^k for k = 1…trials. */
  curves: PerArm<Record<TaskKind | "all", (number | null)[]>>;
};

/** Arm B without a server: the same agent, its decisions the same (see runArmB's http). */
export const offlineArmB =
  (tasks: Task[], prefix: string): ArmRunner =>
  async (faultSeed, trial) => {
    const world = new World(INDEX_LAG);
    await runArmB({ seed: faultSeed, tasks, prefix: `${prefix}-t${trial}`, agent: `${prefix}-t${trial}-arm-b`, startMs: 0, tickMs: 1, isSampled: () => false, world });
    return world;
  };

const offlineArmA =
  (tasks: Task[]): ArmRunner =>
  (faultSeed) => {
    const world = new World(INDEX_LAG);
    runArmA(faultSeed, tasks, world);
    return world;
  };

/** n trials of arms A and B (by default in-process; runEval passes arms that go through the server), and of C when given. */
export async function runTrials(o: { seed: number; tasks: Task[]; trials: number; armA?: ArmRunner; armB?: ArmRunner; armC?: ArmRunner; armD?: ArmRunner; onTrial?: (trial: number) => void }): Promise<Trials> {
  if (!Number.isInteger(o.trials) || o.trials < 1) throw new RangeError(`trials must be a whole number ≥ 1, not ${o.trials}`);
  const runners: Partial<Record<Arm, ArmRunner>> = { A: o.armA ?? offlineArmA(o.tasks), B: o.armB ?? offlineArmB(o.tasks, `eval${o.seed}`), ...(o.armC ? { C: o.armC } : {}), ...(o.armD ? { D: o.armD } : {}) };
  const arms = (["A", "B", "C", "D"] as const).filter((a) => runners[a]);
  const per = <X>(make: () => X) => Object.fromEntries(arms.map((a) => [a, make()])) as PerArm<X>;
  const passing = per(() => new Map(o.tasks.map((t) => [t.id, 0])));
  const perTrial = per<number[]>(() => []);
  const strayOnly = per(() => 0);
  for (let i = 0; i < o.trials; i++) {
    for (const arm of arms) {
      const world = await runners[arm]!(trialSeed(o.seed, i), i);
      const met = world.tasksAtGoal(o.tasks);
      for (const id of met) passing[arm]!.set(id, passing[arm]!.get(id)! + 1);
      perTrial[arm]!.push(met.size);
      strayOnly[arm]! += o.tasks.filter((t) => !met.has(t.id) && t.steps.every((step) => world.holds(step))).length;
    }
    o.onTrial?.(i);
  }
  const curve = (arm: Arm, kind: TaskKind | "all") => passHatKCurve(o.tasks.filter((t) => kind === "all" || t.kind === kind).map((t) => passing[arm]!.get(t.id)!), o.trials);
  const curves = per(() => ({}) as Record<TaskKind | "all", (number | null)[]>);
  for (const arm of arms) curves[arm] = Object.fromEntries((["all", ...TASK_KINDS] as const).map((k) => [k, curve(arm, k)])) as Record<TaskKind | "all", (number | null)[]>;
  const kinds = Object.fromEntries(TASK_KINDS.map((k) => [k, o.tasks.filter((t) => t.kind === k).length])) as Record<TaskKind, number>;
  return { seed: o.seed, trials: o.trials, tasks: o.tasks.length, kinds, arms, passing, perTrial, strayOnly, curves };
}

const pct = (v: number | null) => (v === null ? "—" : `${(v * 100).toFixed(1)} %`);

/** The table: one row per arm and task kind, one column per k. */
export function passKTable(t: Trials): string[][] {
  const ks = Array.from({ length: t.trials }, (_, i) => i + 1);
  const rows = [["Arm", "Task kind", "tasks", ...ks.map((k) => `pass^${k}`)]];
  for (const arm of t.arms) {
    for (const kind of ["all", ...TASK_KINDS] as const) rows.push([arm, kind, String(kind === "all" ? t.tasks : t.kinds[kind]), ...t.curves[arm]![kind].map(pct)]);
  }
  return rows;
}

/** The section docs/EVALUATION.md shows: the table, the plot, how the trials ran. */
export function passKMarkdown(t: Trials, o: { plot?: string; offline: boolean; seconds: number; mismatches: number }): string {
  const all = (arm: Arm, k: number) => pct(t.curves[arm]!.all[k - 1]);
  const failed = (arm: Arm) => t.tasks * t.trials - t.perTrial[arm]!.reduce((a, b) => a + b, 0);
  const server = o.offline
    ? "Arm B's trials after the first ran in-process, without the server (`--trials-offline`): the agent's decisions rest on the environment's reads and the reviewer's probes, never on the server's answers, so its log and final state are the same (eval.itest.ts checks this on trial 0)."
    : t.trials < 2
      ? ""
      : o.mismatches
        ? `Arm B's trials went through the server; in ${o.mismatches} of them Reconcile's metrics **differ** from the ground truth (see the command's output).`
        : `Arm B ran every trial through the server, and in each of them Reconcile's metrics for arm B equal the ground truth (hit, n, unknown and audit samples of all five).`;
  return `
## Reliability across runs (pass^k)

The same ${t.tasks} tasks, ${t.trials} trials each under different fault seeds (trial 0 is the run
above; trial i's seed is derived from \`--seed\`, lib/eval/trials.ts). As τ-bench defines it, a
trial of a task **passes when the environment's final state equals the task's goal state**:
every step's intended value, whole, in each backend its tool names, and nothing else under the
task's keys (a misrouted write left behind fails it, as does a task given up). pass^k — the
chance that k trials of a task all pass — is estimated without bias per task as C(c, k) / C(n, k)
(c of n trials passed) and averaged over tasks (lib/domain/pass-k.ts).

${renderMarkdown(passKTable(t))}
${o.plot ? `\n![pass^k against k, per arm and task kind](${o.plot})\n` : ""}
All tasks: pass^1 ${all("A", 1)} (A) → ${all("B", 1)} (B); pass^${t.trials} ${all("A", t.trials)} → ${all("B", t.trials)}. Passing tasks per
trial: arm A ${t.perTrial.A.join(", ")}; arm B ${t.perTrial.B.join(", ")}. Of the ${failed("B")} failed trials of arm B,
${t.strayOnly.B} had every step's postcondition in place and failed only by a stray write left behind
(a misrouted call: Reconcile flags it, the receipt names another tool, but nothing undoes it);
the others were given up after ${MAX_ATTEMPTS} attempts at a step. Arm A: ${failed("A")} failed trials, ${t.strayOnly.A} of
them by a stray write alone. ${server}${
    t.curves.C
      ? `\n\nArm C (behind the gateway; every trial through it, recorded in Reconcile): pass^1 ${all("C", 1)}, pass^${t.trials} ${all("C", t.trials)}; passing tasks per trial ${t.perTrial.C!.join(", ")}; ${failed("C")} failed trials, ${t.strayOnly.C} of them by a stray write alone. Where C passes less often than A, the gateway refused a repeat whose effect was in place (a duplicate prevented) and the agent gave the rest of the task up; where more often, the repeat arm A sent met a fault of its own.\n`
      : ""
  }${
    t.curves.D
      ? `\nArm D (behind the gateway with verifiers and \`await_verdict\`; every trial through it): pass^1 ${all("D", 1)}, pass^${t.trials} ${all("D", t.trials)}; passing tasks per trial ${t.perTrial.D!.join(", ")}; ${failed("D")} failed trials, ${t.strayOnly.D} of them by a stray write alone. A reviewer is on duty in every trial, as arm B's is in B's trials: a step the gateway answered divergent (\`isError\`) is resolved before the agent's next call, and its repeat goes through as a new attempt. The agent gives a task up after ${MAX_ATTEMPTS} failed attempts at a step, or where the gateway refused the repeats of a call whose fate is unknown (the wrapper's error after the write), as in arm C.\n`
      : ""
  }
(The trials took ${o.seconds.toFixed(0)} s on the machine that wrote this. The CI test, lib/eval/eval.itest.ts,
runs 300 tasks × 8 with the trials after the first in-process, having checked that the agent
without the server makes the same calls, leaves the same environment and logs the same as through
it; one small trial there goes through the server.)
`;
}
