import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { INDEX_LAG, runArmA } from "./arms";
import { draw, makeTasks } from "./tasks";
import { World } from "./world";
import { WorldTools } from "./world-mcp";
import { duplicatesPrevented, type HeldBack } from "./arm-c";

/** Arm C's upstream: the world's tools over MCP meet the faults arms A and B meet, call by call. */
async function connected(tools: WorldTools): Promise<Client> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await tools.server().connect(b);
  const client = new Client({ name: "world-mcp.test", version: "1" });
  await client.connect(a);
  return client;
}

describe("the world's tools as an MCP server", () => {
  const seed = 7;
  const tasks = makeTasks(seed, 20);
  // A step whose first attempt is a false failure (seed 7 has three in 20 tasks).
  const found = tasks.flatMap((task) => task.steps.map((_, s) => ({ task, s }))).find(({ task, s }) => draw(seed, task, s, 0).fault === "false_failure")!;

  it("offers every tool; each call meets the draw of its attempt, and the answer says what MCP can say", async () => {
    const tools = new WorldTools(seed, tasks);
    const client = await connected(tools);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["env.users.create", "env.files.write", "env.ledger.transfer", "env.queue.publish", "env.index.put", "env.billing.charge_and_notify"]);
    const intent = found.task.steps[found.s];
    const args = { request_id: "r", key: intent.key, value: intent.value, ...(intent.needs ? { needs: intent.needs } : {}) };
    // The wrapper failed after the write: a JSON-RPC error, the effect is there.
    const error = await client.callTool({ name: intent.tool, arguments: args }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InternalError);
    expect(tools.calls[0]).toMatchObject({ attempt: 0, fault: "false_failure", answer: "error" });
    expect(tools.world.holds(intent)).toBe(tools.calls[0].held);
    // The same call again is attempt 1, under attempt 1's draw; when it writes, the effect is applied twice.
    const again = (await client.callTool({ name: intent.tool, arguments: args }).catch((e: unknown) => e)) as CallToolResult;
    const fault = draw(seed, found.task, found.s, 1).fault;
    expect(tools.calls[1]).toMatchObject({ attempt: 1, fault });
    if (fault === "rejected") expect(again.isError).toBe(true);
    else if (fault !== "false_failure") expect(again.structuredContent).toMatchObject({ status: "accepted", receipt_id: tools.calls[1].receiptId });
    expect(tools.world.duplicates).toBe(tools.calls[0].held && ["none", "read_unavailable", "false_failure", "wrong_params", "partial"].includes(fault) ? 1 : 0);
    // A step the benchmark does not have is refused as invalid params, and reaches nothing.
    await expect(client.callTool({ name: "env.files.write", arguments: { request_id: "x", key: "t99999-s0", value: {} } })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    expect(tools.calls).toHaveLength(2);
    await client.close();
  });

  it("arm A's calls sent over MCP leave the world arm A leaves in-process", async () => {
    const direct = new World(INDEX_LAG);
    runArmA(seed, tasks, direct);
    const tools = new WorldTools(seed, tasks);
    const client = await connected(tools);
    for (const task of tasks) {
      let ok = true;
      for (const intent of task.steps) {
        if (!ok) break;
        ok = false;
        for (let attempt = 0; attempt < 3 && !ok; attempt++) {
          const r = (await client.callTool({ name: intent.tool, arguments: { request_id: intent.key, key: intent.key, value: intent.value, ...(intent.needs ? { needs: intent.needs } : {}) } }).catch(() => ({ isError: true }))) as CallToolResult;
          ok = !r.isError;
        }
      }
    }
    expect(tools.world.tasksAtGoal(tasks)).toEqual(direct.tasksAtGoal(tasks));
    expect(tools.world.duplicates).toBe(direct.duplicates);
    expect(direct.duplicates).toBeGreaterThan(0);
    await client.close();
  });
});

describe("duplicates prevented", () => {
  const held = (operation: string, fault: HeldBack["fault"], wouldWrite: boolean): HeldBack => ({ operation, task: "t", step: 0, attempt: 1, answer: "refused", text: "", effectInPlace: true, fault, wouldWrite });
  it("counts the effects the held-back repeats would have applied again, up to the first that would have answered", () => {
    // A refusal in between writes nothing; the agent goes on and the next repeat applies it again.
    expect(duplicatesPrevented([held("a", "rejected", false), held("a", "none", true)])).toBe(1);
    // A second false failure applies it again and fails again: the agent would have sent a third.
    expect(duplicatesPrevented([held("b", "false_failure", true), held("b", "none", true)])).toBe(2);
    // The first repeat would have answered: the agent stops there, the second never happens.
    expect(duplicatesPrevented([held("c", "none", true), held("c", "none", true)])).toBe(1);
    expect(duplicatesPrevented([held("d", "no_effect", false), held("d", "none", true)])).toBe(0);
  });
});

