import { describe, expect, it } from "vitest";
import { verifierDefinitionSchema } from "@/lib/domain/verifier";
import { judgeResponse } from "@/lib/domain/verifier-check";
import { INDEX_LAG } from "./arms";
import { operationOf } from "./arm-c";
import { verdictOfD } from "./arm-d";
import { draw, makeTasks, type Task } from "./tasks";
import { World, type Intent } from "./world";
import { WorldTools } from "./world-mcp";
import { READ_AFTER_TICKS, WorldReads, worldVerifiers } from "./world-reads";

/** Arm D's read service (issue 48 part 5): answers as of the operation's step, whatever happens later. */
const tasks = makeTasks(3, 200);
const setup = () => {
  const world = new World(INDEX_LAG);
  const reads = new WorldReads(3, operationOf("run"));
  const tools = new WorldTools(3, tasks, world, reads.onCall);
  return { world, reads, tools };
};
const argsOf = (i: Intent) => ({ request_id: "x", key: i.key, value: i.value, ...(i.needs ? { needs: i.needs } : {}) });
/** A step whose first attempt meets this fault and whose read can be made. */
const stepWith = (fault: string, tool?: string): { task: Task; step: number } => {
  for (const task of tasks) for (let step = 0; step < task.steps.length; step++) if (!task.steps[step].needs && (!tool || task.steps[step].tool === tool) && draw(3, task, step, 0).fault === fault && !draw(3, task, step, 0).readUnavailable) return { task, step };
  throw new Error(`no step meets ${fault}`);
};

describe("arm D's world reads", () => {
  it("an index write is read as it will be once the lag has passed: the verifier's window covers it", () => {
    const { reads, tools } = setup();
    const { task, step } = stepWith("none", "env.index.put");
    tools.call("env.index.put", argsOf(task.steps[step]));
    expect(READ_AFTER_TICKS).toBe(INDEX_LAG);
    expect(reads.read(`run-${task.id}-s${step}`)).toMatchObject({ status: "match", value: task.steps[step].value });
  });

  it("a read answers as the call left the world, however late it comes and however often", () => {
    const { reads, tools, world } = setup();
    const { task, step } = stepWith("no_effect");
    const intent = task.steps[step];
    tools.call(intent.tool, argsOf(intent));
    const id = `run-${task.id}-s${step}`;
    expect(reads.read(id)?.status).toBe("absent");
    // The same key written later (as the step's next attempt would), and the clock moved on.
    world.call(intent, "none");
    world.now += 50;
    expect(world.holds(intent)).toBe(true);
    expect(reads.read(id)?.status).toBe("absent");
    expect(reads.read(id)?.status).toBe("absent");
  });

  it("the second attempt the tool sees is the gateway's `~2`; a call the tool never saw is unknown", () => {
    const { reads, tools } = setup();
    const { task, step } = stepWith("rejected");
    const intent = task.steps[step];
    expect(tools.call(intent.tool, argsOf(intent)).isError).toBe(true);
    tools.call(intent.tool, argsOf(intent));
    const id = `run-${task.id}-s${step}`;
    expect(reads.read(id)?.status).toBe("absent");
    expect(reads.read(`${id}~2`)).not.toBeNull();
    expect(reads.read(`${id}~3`)).toBeNull();
  });

  it("the category-5 draw makes the read unavailable, the same draw arms A–C meet", () => {
    const { reads, tools } = setup();
    let found = false;
    for (const task of tasks) {
      if (task.steps[0].needs || !draw(3, task, 0, 0).readUnavailable) continue;
      tools.call(task.steps[0].tool, argsOf(task.steps[0]));
      expect(reads.read(`run-${task.id}-s0`)?.status).toBe("unavailable");
      found = true;
      break;
    }
    expect(found).toBe(true);
  });

  it("the verifiers are valid definitions and judge the service's answers as the world reads them", () => {
    const defs = worldVerifiers("http://127.0.0.1:4567");
    expect(defs).toHaveLength(6);
    for (const d of defs) expect(verifierDefinitionSchema.safeParse(d).success).toBe(true);
    const value = { task: "t1", step: 0, amount: 5 };
    const ctx = { operation_id: "op", intent: { params: { value } }, receipt: {}, envelope: {} };
    const judge = (status: number, body: unknown) => judgeResponse(defs[0], ctx, { status, body: JSON.stringify(body) }).status;
    expect(judge(200, { data: { id: "users:k", value: { amount: 5, step: 0, task: "t1" }, sha256: "sha256:x" } })).toBe("match");
    expect(judge(200, { data: { id: "users:k", value: { ...value, corrupted: true }, sha256: "sha256:y" } })).toBe("mismatch");
    expect(judge(404, { error: "not found" })).toBe("absent");
    expect(judge(503, { error: "down" })).toBe("unavailable");
  });

  it("Reconcile's verdict from a gateway record and its read", () => {
    expect(verdictOfD("accepted", "match")).toBe("verified");
    expect(verdictOfD("accepted", "absent")).toBe("divergent");
    expect(verdictOfD("accepted", "mismatch")).toBe("divergent");
    expect(verdictOfD("accepted", "unavailable")).toBe("uncertain");
    expect(verdictOfD("rejected", "absent")).toBe("rejected");
    expect(verdictOfD("rejected", "match")).toBe("divergent");
    expect(verdictOfD("error", null)).toBe("uncertain");
  });
});
