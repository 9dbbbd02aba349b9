import { createHash } from "node:crypto";
import { rng, type Fault, type Intent, type Tool } from "./world";

/**
 * Protocol 2's benchmark (000 §VII): tasks of the paper's five kinds, each step with a known
 * postcondition, and the faults injected into each call. Both arms meet exactly the same tasks
 * and the same fault for the same (task, step, attempt), so their difference is the agent's.
 */
export const TASK_KINDS = ["simple", "compound", "adversarial", "partial", "cross_system"] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

export type Task = { id: string; kind: TaskKind; steps: Intent[] };

/** Fault rates per call, by task kind (stated in docs/EVALUATION.md). */
const BASE: Record<Exclude<Fault, "none">, number> = {
  wrong_tool: 0.02,
  wrong_params: 0.03,
  partial: 0.02,
  no_effect: 0.04,
  read_unavailable: 0.04,
  rejected: 0.04,
  false_failure: 0.01,
};
export const FAULT_RATES: Record<TaskKind, Record<Exclude<Fault, "none">, number>> = {
  simple: BASE,
  compound: BASE,
  adversarial: { ...BASE, no_effect: 0.25 },
  partial: { ...BASE, partial: 0.25 },
  cross_system: { ...BASE, partial: 0.12 },
};

/** A number from a string, for seeding one call's draws. */
export function seedOf(...parts: (string | number)[]): number {
  return createHash("sha256").update(parts.join("/")).digest().readUInt32LE(0);
}

/**
 * The fault of one attempt of one step: a tool fault (at most one), whether the read-back can be
 * made (category 5, drawn on its own: an unreadable resource may hide any of the others), and how
 * many ticks the agent waits before reading back.
 */
export function draw(seed: number, task: Task, step: number, attempt: number): { fault: Fault; readUnavailable: boolean; wait: number } {
  const r = rng(seedOf(seed, task.id, step, attempt));
  const u = r();
  const rates = FAULT_RATES[task.kind];
  let acc = 0;
  let fault: Fault = "none";
  for (const [f, p] of Object.entries(rates)) {
    if (f === "read_unavailable") continue;
    acc += p;
    if (u < acc) {
      fault = f as Fault;
      break;
    }
  }
  return { fault, readUnavailable: r() < rates.read_unavailable, wait: Math.floor(r() * 4) };
}

const pickFrom = <T>(r: () => number, xs: readonly T[]) => xs[Math.floor(r() * xs.length)];

/** The benchmark: `n` tasks, kinds in turn, contents from the seed. */
export function makeTasks(seed: number, n: number): Task[] {
  const r = rng(seedOf(seed, "tasks"));
  const tasks: Task[] = [];
  for (let i = 0; i < n; i++) {
    const kind = TASK_KINDS[i % TASK_KINDS.length];
    const id = `t${String(i).padStart(5, "0")}`;
    const step = (tool: Tool, s: number, needs?: Intent): Intent => ({
      tool,
      key: `${id}-s${s}`,
      value: { task: id, step: s, amount: 1 + Math.floor(r() * 1000), ...(needs ? { ref: needs.key } : {}) },
      ...(needs ? { needs: { tool: needs.tool, key: needs.key } } : {}),
    });
    let steps: Intent[];
    switch (kind) {
      case "simple":
        steps = [step(pickFrom(r, ["env.users.create", "env.files.write", "env.ledger.transfer", "env.queue.publish", "env.index.put"] as const), 0)];
        break;
      case "compound": {
        // The paper's cascade: a record, a file referencing it, its index entry, a notification.
        const a = step("env.users.create", 0);
        const b = step("env.files.write", 1, a);
        const c = step("env.index.put", 2, b);
        steps = [a, b, c, step("env.queue.publish", 3, c)];
        break;
      }
      case "adversarial":
        steps = [step(pickFrom(r, ["env.users.create", "env.ledger.transfer"] as const), 0), step(pickFrom(r, ["env.files.write", "env.queue.publish"] as const), 1)];
        break;
      case "partial":
        steps = [step("env.files.write", 0), step("env.ledger.transfer", 1)];
        break;
      case "cross_system":
        steps = [step("env.billing.charge_and_notify", 0)];
        break;
    }
    tasks.push({ id, kind, steps });
  }
  return tasks;
}
