import { describe, expect, it } from "vitest";
import type { Http, OpLog } from "./arms";
import { opLogOf, operationOf, reviewAfterwards } from "./arm-c";
import { onDutyMismatches, onDutyResolution, ReviewerOnDuty, verdictOfD } from "./arm-d";
import { draw, makeTasks, type Task } from "./tasks";
import { WorldTools, type WorldCall } from "./world-mcp";
import { recoveryOf } from "./markdown-d";

/**
 * Arm D's reviewer on duty (the parts without a server): what it resolves, what it sends
 * Reconcile, and the checks that keep its resolutions and the ground-truth log the same.
 * eval.itest.ts runs it against the real gateway and server.
 */

const seed = 7;
const tasks = makeTasks(seed, 60);
const prefix = "run";
const opId = operationOf(prefix);

/** The first step (without a premise) whose first attempt meets `fault`. */
function stepWith(fault: string): { task: Task; s: number } {
  for (const task of tasks) for (let s = 0; s < task.steps.length; s++) if (!task.steps[s].needs && draw(seed, task, s, 0).fault === fault) return { task, s };
  throw new Error(`no step meets ${fault} in its first attempt`);
}

/** One call of that step through the world's tools (no gateway), told `told` as the gateway's _meta would. */
function callOf(tools: WorldTools, { task, s }: { task: Task; s: number }, told: string): WorldCall {
  const intent = task.steps[s];
  try {
    tools.call(intent.tool, { request_id: "r", key: intent.key, value: intent.value });
  } catch {
    /* the wrapper's error: the call is recorded all the same */
  }
  const c = tools.calls.at(-1)!;
  c.told = told;
  c.agentSaw = told === "verified" ? "result" : "error";
  return c;
}

/** Reconcile's API as the reviewer uses it: records each request, answers the read with `state`. */
function api(state: (id: string) => unknown): { http: Http; sent: { method: string; path: string; body?: any }[] } {
  const sent: { method: string; path: string; body?: any }[] = [];
  const http: Http = async (method, path, body) => {
    sent.push({ method, path, body });
    if (method === "POST") return { status: 201, body: { correction: { id: "c1" } } };
    return { status: 200, body: state(decodeURIComponent(path.split("/").at(-1)!)) };
  };
  return { http, sent };
}

describe("arm D's reviewer on duty", () => {
  it("resolves what the gateway answered divergent, by what the probe finds; leaves everything else", () => {
    expect(onDutyResolution("divergent", false)).toBe("not_applied");
    expect(onDutyResolution("divergent", true)).toBe("verified");
    for (const told of ["verified", "uncertain", "rejected", undefined]) {
      expect(onDutyResolution(told, false)).toBeNull();
      expect(onDutyResolution(told, true)).toBeNull();
    }
  });

  it("probes the world, resolves the divergent operation through the corrections API and checks the retry gate opened", async () => {
    const tools = new WorldTools(seed, tasks);
    const { http, sent } = api(() => ({ effective_outcome: "not_applied", retry: { decision: "a new operation may be issued" } }));
    const reviewer = new ReviewerOnDuty(http, tools.world, opId);
    const step = stepWith("no_effect");
    const c = callOf(tools, step, "divergent");
    expect(c.held).toBe(false);
    await reviewer.afterAnswer(c);
    const id = opId(c);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual([`POST /api/v1/operations/${encodeURIComponent(id)}/corrections`, `GET /api/v1/operations/${encodeURIComponent(id)}`]);
    expect(sent[0].body).toMatchObject({ action: "resolve", outcome: "not_applied", expected_last_correction_id: null });
    expect(sent[0].body.evidence).toBeUndefined();
    expect(reviewer.resolved).toEqual([{ id, outcome: "not_applied" }]);
    // Answers that are not divergent: nothing is sent.
    await reviewer.afterAnswer(callOf(tools, stepWith("none"), "verified"));
    await reviewer.afterAnswer(callOf(tools, stepWith("false_failure"), "uncertain"));
    expect(sent).toHaveLength(2);
    expect(reviewer.resolved).toHaveLength(1);
  });

  it("fails the run when Reconcile does not take the resolution, or the probe and the log disagree", async () => {
    // Each case in a world of its own: the step's first attempt, a success without effect.
    const step = stepWith("no_effect");
    const once = (state: unknown) => {
      const tools = new WorldTools(seed, tasks);
      return { reviewer: new ReviewerOnDuty(api(() => state).http, tools.world, opId), c: callOf(tools, step, "divergent") };
    };
    const still = once({ effective_outcome: "divergent", retry: { decision: "refuse" } });
    await expect(still.reviewer.afterAnswer(still.c)).rejects.toThrow(/resolved not_applied on duty, Reconcile says divergent/);
    const gateShut = once({ effective_outcome: "not_applied", retry: { decision: "refuse" } });
    await expect(gateShut.reviewer.afterAnswer(gateShut.c)).rejects.toThrow(/the retry gate says/);
    const ok = once({ effective_outcome: "not_applied", retry: { decision: "a new operation may be issued" } });
    await ok.reviewer.afterAnswer(ok.c);
    expect(ok.reviewer.resolved).toHaveLength(1);
    const disagree = once({ effective_outcome: "not_applied", retry: { decision: "a new operation may be issued" } });
    disagree.c.held = true;
    await expect(disagree.reviewer.afterAnswer(disagree.c)).rejects.toThrow(/the log says held/);
  });

  it("its resolutions must be the log's reviews, and every divergent answer must have one", () => {
    const tools = new WorldTools(seed, tasks);
    const calls = [callOf(tools, stepWith("no_effect"), "divergent"), callOf(tools, stepWith("none"), "verified"), callOf(tools, stepWith("wrong_params"), "divergent")];
    const log = opLogOf(calls, prefix, (c) => verdictOfD(c.answer, c.told === "divergent" ? "absent" : "match"));
    expect(log.map((l) => l.review)).toEqual(["not_applied", "none", "not_applied"]);
    const both = [
      { id: log[0].id, outcome: "not_applied" as const },
      { id: log[2].id, outcome: "not_applied" as const },
    ];
    expect(onDutyMismatches(calls, log, both)).toEqual([]);
    expect(onDutyMismatches(calls, log, both.slice(0, 1))).toEqual([`${log[2].id}: answered divergent, not resolved on duty`]);
    expect(onDutyMismatches(calls, log, [both[0], { id: log[2].id, outcome: "verified" }])).toEqual([`${log[2].id}: resolved verified on duty, the log's review is not_applied`]);
    expect(onDutyMismatches(calls, log, [...both, both[0]])).toEqual(["an operation was resolved on duty twice"]);
    expect(onDutyMismatches(calls, log, [...both, { id: "elsewhere", outcome: "verified" }])).toEqual(["elsewhere: resolved on duty, but no call of it reached the tool"]);
  });

  it("the reviewer after the run skips what the reviewer on duty resolved", async () => {
    const tools = new WorldTools(seed, tasks);
    const calls = [callOf(tools, stepWith("no_effect"), "divergent"), callOf(tools, stepWith("false_failure"), "uncertain"), callOf(tools, stepWith("none"), "verified")];
    const log = opLogOf(calls, prefix, (c) => (c.answer === "error" ? "uncertain" : verdictOfD(c.answer, c.told === "divergent" ? "absent" : "match")));
    const { http, sent } = api(() => ({}));
    await reviewAfterwards(http, log, new Set([log[0].id]));
    expect(sent.map((r) => r.path)).toEqual([`/api/v1/operations/${encodeURIComponent(log[1].id)}/corrections`]);
    // The wrapper's error after the write: the effect is there, resolved verified with evidence.
    expect(sent[0].body).toMatchObject({ action: "resolve", outcome: "verified", evidence: { object_id: log[1].id } });
    const all = api(() => ({}));
    await reviewAfterwards(all.http, log);
    expect(all.sent).toHaveLength(2);
  });
});

describe("what became of arm D's detected failures (docs/EVALUATION.md)", () => {
  const op = (id: string, order: number, verdict: OpLog["verdict"], actual: OpLog["actual"], recovers: string[] = []): OpLog => ({
    id,
    kind: "simple",
    trajectory: "run-mcp-session",
    tool: "env.users.create",
    fingerprint: null,
    order,
    claim: "none",
    actual,
    accepted: verdict !== "rejected",
    verdict,
    review: verdict === "divergent" ? (actual === "held" ? "verified" : "not_applied") : "none",
    recovers,
    sampled: false,
  });

  it("recovered, followed by an attempt that did not recover it, a false alarm, the last attempt", () => {
    const log = [
      op("a", 0, "divergent", "not_held"),
      op("a~2", 1, "verified", "held", ["a"]),
      op("b", 2, "divergent", "not_held"),
      op("b~2", 3, "rejected", "not_held", ["b"]),
      op("b~3", 4, "divergent", "not_held", ["b~2"]),
      op("c", 5, "divergent", "held"),
      op("d", 6, "verified", "held"),
    ];
    // a recovered; b and b~2 followed by attempts that did not end verified; b~3 the last; c in place.
    expect(recoveryOf(log)).toEqual({ n: 5, hit: 1, nextFailed: 2, stepVerifiedLater: 0, inPlace: 1, noNext: 1 });
    // e's second attempt was rejected, its third verified: it recovers e~2, not e; the step was done all the same.
    const later = [...log, op("e", 7, "divergent", "not_held"), op("e~2", 8, "rejected", "not_held", ["e"]), op("e~3", 9, "verified", "held", ["e~2"])];
    expect(recoveryOf(later)).toEqual({ n: 7, hit: 2, nextFailed: 3, stepVerifiedLater: 1, inPlace: 1, noNext: 1 });
  });
});
