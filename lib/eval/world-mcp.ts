import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { INDEX_LAG } from "./arms";
import { draw, type Task } from "./tasks";
import { TOOLS, World, type Fault, type Intent, type Tool } from "./world";

/**
 * Arm C's upstream (issue 37 part 3): the simulated world's tools as a real MCP server (the
 * official SDK's low-level `Server`, over Streamable HTTP on 127.0.0.1, in the evaluator's
 * process so that the world's ground truth stays readable). Each call meets the fault arms A and
 * B meet for the same task, step and attempt — the n-th call of a step that reaches the tool is
 * its attempt n — so the same seed makes the same world.
 *
 * How the faults reach MCP: a tool that answers is a result (`structuredContent` the receipt); an
 * honest refusal is a result with `isError: true`; a false failure (applied, but the wrapper
 * failed) is the wrapper's crash after the write, a JSON-RPC error, so the caller cannot tell
 * whether anything happened. The other faults (wrong tool, wrong params, partial, no effect) are
 * results that look like success: what the receipt says is all the caller gets.
 */

/** One call that reached the tool, with the ground truth probed right after it. */
export type WorldCall = {
  task: Task;
  step: number;
  intent: Intent;
  /** The step's attempt as the tool counts them (0 for the first call that reached it). */
  attempt: number;
  fault: Fault;
  answer: "accepted" | "rejected" | "error";
  receiptId: string;
  held: boolean;
  /** What the agent got back (filled in by arm C's loop): an error or a result. */
  agentSaw?: "error" | "result";
  /** The outcome the gateway's `_meta["reconcile/outcome"]` carried (the evaluator's record; the agent does not read it). */
  told?: string;
};

const TOOL_SET = new Set<string>(TOOLS);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export class WorldTools {
  readonly calls: WorldCall[] = [];
  private readonly attempts = new Map<string, number>();
  private readonly steps: Map<string, { task: Task; step: number }>;

  constructor(
    readonly seed: number,
    tasks: readonly Task[],
    readonly world: World = new World(INDEX_LAG),
    /** Told of each call as it happens, before the tool answers (arm D's verifier reads snapshot the world here). */
    private readonly onCall?: (call: WorldCall, snapshot: ReturnType<World["snapshot"]>) => void,
  ) {
    this.steps = new Map(tasks.flatMap((task) => task.steps.map((s, step) => [s.key, { task, step }] as const)));
  }

  /** How many calls of this step reached the tool. */
  attemptsOf(key: string): number {
    return this.attempts.get(key) ?? 0;
  }

  /** One tools/call: the world executes it under the step's fault for this attempt. */
  call(name: string, args: Record<string, unknown>): CallToolResult {
    const where = this.steps.get(typeof args.key === "string" ? args.key : "");
    if (!TOOL_SET.has(name) || !where || where.task.steps[where.step].tool !== name || !isObject(args.value)) {
      throw new McpError(ErrorCode.InvalidParams, `${name}: no such step (key ${JSON.stringify(args.key)})`);
    }
    const intent: Intent = { tool: name as Tool, key: args.key as string, value: args.value, ...(isObject(args.needs) ? { needs: args.needs as Intent["needs"] } : {}) };
    const attempt = this.attemptsOf(intent.key);
    this.attempts.set(intent.key, attempt + 1);
    const { fault } = draw(this.seed, where.task, where.step, attempt);
    const receipt = this.world.call(intent, fault);
    const answer = fault === "false_failure" ? "error" : receipt.status;
    const call: WorldCall = { task: where.task, step: where.step, intent, attempt, fault, answer, receiptId: receipt.receipt_id, held: this.world.holds(intent) };
    this.calls.push(call);
    this.onCall?.(call, this.world.snapshot(intent));
    if (answer === "error") throw new McpError(ErrorCode.InternalError, `${name}: the wrapper failed after calling the backend (connection reset)`);
    if (answer === "rejected") return { isError: true, content: [{ type: "text", text: `${name} ${intent.key}: refused, nothing was written` }] };
    return { content: [{ type: "text", text: JSON.stringify(receipt) }], structuredContent: receipt };
  }

  /** A low-level MCP server offering the world's tools. */
  server(): Server {
    const server = new Server({ name: "protocol-2-world", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: TOOLS.map((name) => ({
        name,
        description: `The simulated environment's ${name} (lib/eval/world.ts). Send the same request_id when you repeat a call.`,
        inputSchema: {
          type: "object" as const,
          properties: {
            request_id: { type: "string" },
            key: { type: "string" },
            value: { type: "object" },
            needs: { type: "object", properties: { tool: { type: "string" }, key: { type: "string" } } },
          },
          required: ["request_id", "key", "value"],
        },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => this.call(request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>));
    return server;
  }

  /** Serves the tools over Streamable HTTP on 127.0.0.1 (a server per MCP session, one world). */
  async listen(): Promise<{ url: string; close: () => Promise<void> }> {
    const sessions = new Map<string, StreamableHTTPServerTransport>();
    const http = createServer(async (req, res) => {
      const id = req.headers["mcp-session-id"];
      let transport = typeof id === "string" ? sessions.get(id) : undefined;
      if (!transport) {
        const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void sessions.set(sid, t) });
        await this.server().connect(t);
        transport = t;
      }
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    return {
      url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
      close: async () => {
        await Promise.allSettled([...sessions.values()].map((t) => t.close()));
        http.closeAllConnections();
        await new Promise((r) => http.close(r));
      },
    };
  }
}
