import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { parseConfig } from "../gateway/src/config";
import { OUTCOME_META } from "../gateway/src/outcome";
import { startGateway } from "../gateway/src/server";
import type { Outcome } from "@/lib/domain/outcomes";
import { INDEX_LAG, MAX_ATTEMPTS, Mismatch, type Http, type OpLog } from "./arms";
import { draw, type Task } from "./tasks";
import { World, type Fault } from "./world";
import { WorldTools, type WorldCall } from "./world-mcp";

/**
 * Protocol 2's arm C (issue 37 part 3): arm A's agent — it believes what a tool returns and
 * repeats a call that failed, at most MAX_ATTEMPTS times, then gives the task up — talking MCP
 * (the official SDK's Client) to the real gateway (lib/gateway), which forwards to the world's
 * tools (lib/eval/world-mcp.ts) and records every call in Reconcile under a token of its own.
 * The agent has no code for recording or gating: a repeat it sends with the same request id is
 * refused, replayed or forwarded by the gateway alone. No verifier is configured, so nothing
 * reads the world back (docs/EVALUATION.md says why).
 */

export type ArmCOptions = {
  seed: number;
  tasks: Task[];
  /** The Reconcile server the gateway records to, and the gateway's own token (ingest, read). */
  base: string;
  gatewayToken: string;
  /** Names the run's request ids; `agent` is the MCP client's name, which the gateway records as the agent. */
  prefix: string;
  agent: string;
  world?: World;
  /**
   * After the run (the agent never waits for it), a reviewer works through arm C's uncertain
   * operations, probing the world, over this HTTP (a token with review). Without it the records
   * stay as the gateway left them (the pass^k trials).
   */
  review?: Http;
};

/** A repeat the gateway did not forward (the tool never saw it). */
export type HeldBack = {
  operation: string;
  task: string;
  step: number;
  attempt: number;
  answer: "refused" | "replayed";
  text: string;
  /** The step's intended effect was wholly in place in the world when the repeat was held back. */
  effectInPlace: boolean;
  /** The fault this attempt would have met at the tool (arm A met it). */
  fault: Fault;
  /** Forwarded, it would have applied that effect again. */
  wouldWrite: boolean;
};

export type ArmCResult = {
  log: OpLog[];
  world: World;
  /** Every agent call the gateway answered without forwarding. */
  heldBack: HeldBack[];
  /** Duplicates prevented, from the world's ground truth (see duplicatesPrevented). */
  prevented: number;
  calls: number;
};

const textOf = (r: CallToolResult) => (r.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");
const TOKEN_ENV = "RECONCILE_EVAL_GATEWAY_TOKEN";

/** The request id of a step: what the agent sends on every attempt (the gateway's operation_id_from). */
export const requestIdOf = (prefix: string, task: Task, step: number) => `${prefix}-${task.id}-s${step}`;

export async function runArmC(o: ArmCOptions): Promise<ArmCResult> {
  const world = o.world ?? new World(INDEX_LAG);
  const run = await driveThroughGateway({ ...o, world, rule: {} });
  const ops = opLogOf(run.calls, o.prefix);
  if (o.review) await reviewAfterwards(o.review, ops);
  return { log: ops, world, heldBack: run.heldBack, prevented: duplicatesPrevented(run.heldBack), calls: run.agentCalls };
}

/**
 * Arm A's agent behind the real gateway (arms C and D): the world's tools served over MCP, the
 * gateway in front with `rule` added to the tools' rule, the agent's calls one at a time, tasks
 * and steps in order. Returns what reached the tools (each with what the agent saw and the
 * outcome the gateway's `_meta` carried) and the repeats held back.
 */
export async function driveThroughGateway(o: {
  seed: number;
  tasks: Task[];
  base: string;
  gatewayToken: string;
  prefix: string;
  agent: string;
  world: World;
  rule: Record<string, unknown>;
  onCall?: ConstructorParameters<typeof WorldTools>[3];
  /**
   * Harness, not agent: told of each call that reached the tool once its answer is back (what the
   * agent saw and the outcome `_meta` carried filled in), and awaited before the agent's next call
   * (arm D's reviewer on duty). The agent's policy does not change: it never hears of this.
   */
  afterAnswer?: (call: WorldCall) => Promise<void>;
}): Promise<{ calls: WorldCall[]; heldBack: HeldBack[]; agentCalls: number }> {
  const world = o.world;
  const tools = new WorldTools(o.seed, o.tasks, world, o.onCall);
  const upstream = await tools.listen();
  const log: string[] = [];
  const config = parseConfig({
    reconcile: { url: o.base, token_env: TOKEN_ENV },
    listen: { http: { port: 0 } },
    upstreams: { world: { url: upstream.url } },
    tools: { "env.*": { operation_id_from: "/request_id", receipt_id_from: "/receipt_id", ...o.rule } },
    journal_dir: null,
  });
  const gateway = await startGateway(config, { env: { ...process.env, [TOKEN_ENV]: o.gatewayToken }, log: (line) => log.push(line) });
  const client = new Client({ name: o.agent, version: "1.0.0" });
  const heldBack: HeldBack[] = [];
  let agentCalls = 0;
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
    // One call at a time, tasks and steps in order: the world, the gateway's decisions and the records are a function of the seed.
    for (const task of o.tasks) {
      for (let s = 0; s < task.steps.length; s++) {
        const intent = task.steps[s];
        const args = { request_id: requestIdOf(o.prefix, task, s), key: intent.key, value: intent.value, ...(intent.needs ? { needs: intent.needs } : {}) };
        let believed = false;
        for (let attempt = 0; attempt < MAX_ATTEMPTS && !believed; attempt++) {
          const before = tools.calls.length;
          const result = (await client.callTool({ name: intent.tool, arguments: args })) as CallToolResult;
          agentCalls++;
          // The agent's whole policy: what an MCP client does anyway, `isError` is a failure.
          believed = !result.isError;
          if (tools.calls.length === before + 1) {
            tools.calls[before].agentSaw = result.isError ? "error" : "result";
            tools.calls[before].told = (result._meta?.[OUTCOME_META] as { outcome?: string } | undefined)?.outcome;
            await o.afterAnswer?.(tools.calls[before]);
          } else if (tools.calls.length === before) {
            heldBack.push({
              operation: args.request_id,
              task: task.id,
              step: s,
              attempt,
              answer: result.isError ? "refused" : "replayed",
              text: textOf(result),
              effectInPlace: world.holds(intent),
              fault: draw(o.seed, task, s, attempt).fault,
              wouldWrite: world.wouldDuplicate(intent, draw(o.seed, task, s, attempt).fault),
            });
          } else throw new Mismatch(`behind the gateway: one agent call reached the tool ${tools.calls.length - before} times`);
        }
        if (!believed) break; // gives up the task, as arm A does
      }
    }
    await gateway.reconcile.flush();
  } finally {
    await client.close().catch(() => undefined);
    await gateway.stop();
    await upstream.close();
  }
  if (log.length) throw new Mismatch(`the gateway reported problems: ${log.slice(0, 3).join("; ")}`);
  return { calls: tools.calls, heldBack, agentCalls };
}

/**
 * The effects the held-back repeats would have applied again, had the gateway forwarded them: the
 * calls arm A made. A step's held-back repeats in order: one whose fault writes while the effect
 * is wholly in place is a duplicate; the agent would have stopped at the first one that answered
 * (neither refused nor failed). Nothing in between changes whether the effect holds: a refusal
 * writes nothing, a false failure writes the same value.
 */
export function duplicatesPrevented(heldBack: HeldBack[]): number {
  let n = 0;
  const stopped = new Set<string>();
  for (const h of heldBack) {
    if (stopped.has(h.operation)) continue;
    if (h.wouldWrite) n++;
    if (h.fault !== "rejected" && h.fault !== "false_failure") stopped.add(h.operation);
  }
  return n;
}

/** The operation id the gateway gives a call that reached the tool: the step's request id, `~n` for the n-th forwarded attempt. */
export const operationOf = (prefix: string) => (c: Pick<WorldCall, "task" | "step" | "attempt">) => {
  const base = requestIdOf(prefix, c.task, c.step);
  return c.attempt === 0 ? base : `${base}~${c.attempt + 1}`;
};

/** Arm C's verdicts: nothing reads the world back, so accepted (or no receipt) is uncertain, refused is rejected. */
const unread = (c: WorldCall): Outcome => (c.answer === "rejected" ? "rejected" : "uncertain");

/**
 * The operations the gateway must have recorded, one per call that reached the tool: the step's
 * request id, then `{id}~2`, `{id}~3` for attempts forwarded after a refusal or a resolution
 * not applied (each recovers the one before), with the verdict `verdictOf` gives (arm C: accepted
 * → uncertain, refused → rejected, the wrapper's error → no receipt, uncertain; arm D: what its
 * verifier read). Claims are the agent's beliefs (the gateway records none: see withoutClaims);
 * the review is a reviewer's probe of every uncertain or divergent operation: arm D's reviewer
 * on duty makes it during the run for those answered divergent, reviewAfterwards for the rest.
 */
export function opLogOf(calls: WorldCall[], prefix: string, verdictOf: (call: WorldCall, operation: string) => Outcome = unread): OpLog[] {
  const opId = operationOf(prefix);
  return calls.map((c, order) => {
    const id = opId(c);
    const verdict = verdictOf(c, id);
    return {
      id,
      kind: c.task.kind,
      trajectory: `${prefix}-mcp-session`,
      tool: c.intent.tool,
      fingerprint: null,
      order,
      claim: c.agentSaw === "result" ? "success" : "other",
      actual: c.held ? "held" : "not_held",
      accepted: c.answer === "accepted",
      verdict,
      review: verdict === "uncertain" || verdict === "divergent" ? (c.held ? "verified" : "not_applied") : "none",
      recovers: c.attempt === 0 ? [] : [opId({ ...c, attempt: c.attempt - 1 })],
      sampled: false,
    } satisfies OpLog;
  });
}

/** Arm C's log as Reconcile holds it: the gateway records no claim. */
export const withoutClaims = (log: OpLog[]): OpLog[] => log.map((l) => ({ ...l, claim: "none" }));

/**
 * The reviewer after the run: each uncertain or divergent operation probed in the world and
 * resolved, as arm B's reviewer does, except those `done` already (arm D's reviewer on duty
 * resolved them during the run: a second resolution would be refused, it is not the first).
 */
export async function reviewAfterwards(http: Http, log: OpLog[], done: ReadonlySet<string> = new Set()): Promise<void> {
  for (const l of log) {
    if (l.review === "none" || done.has(l.id)) continue;
    const held = l.review === "verified";
    const res = await http("POST", `/api/v1/operations/${encodeURIComponent(l.id)}/corrections`, {
      action: "resolve",
      outcome: l.review,
      reason: held ? "after the run: probed the backend, the effect is there" : "after the run: probed the backend, the effect is not there",
      ...(held ? { evidence: { object_id: l.id } } : {}),
      expected_last_correction_id: null,
    });
    if (res.status !== 201) throw new Mismatch(`after the run: resolve ${l.id}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  }
}
