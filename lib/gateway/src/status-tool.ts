/**
 * The gateway's own tool, `reconcile_status` (docs/GATEWAY.md "The outcome at the boundary"):
 * Reconcile's verdict on an earlier call, by the operation id an answer named, or by the tool and
 * arguments of a call this gateway saw. It records nothing; a refusal names the field.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { operationIdProblem, type Reconcile } from "@reconcile/client";
import type { GatewayConfig } from "./config.js";
import { callerId } from "./operation-id.js";
import { metaOf, statusAnswer, type OperationView } from "./outcome.js";
import { effectiveRule } from "./rules.js";
import type { RoutedTool, Upstreams } from "./upstreams.js";

export type StatusDeps = {
  config: GatewayConfig;
  upstreams: Upstreams;
  rc: Reconcile;
  /** The operation this agent's last call of the tool with these arguments became (this process's memory), or null. */
  lastOperation: (t: RoutedTool, args: Record<string, unknown>) => string | null;
};

const refusal = (text: string): CallToolResult => ({ content: [{ type: "text", text }], isError: true });

export async function answerStatus(args: Record<string, unknown>, ctx: { signal: AbortSignal }, deps: StatusDeps): Promise<CallToolResult> {
  let id: string | null = null;
  if (args.operation_id !== undefined) {
    if (typeof args.operation_id !== "string") return refusal('operation_id must be a string: the id an earlier answer named (its _meta "reconcile/outcome".operation_id)');
    const problem = operationIdProblem(args.operation_id);
    if (problem) return refusal(`operation_id ${problem}`);
    id = args.operation_id;
  } else if (typeof args.tool === "string") {
    const t = deps.upstreams.tool(args.tool);
    if (!t) return refusal(`tool: no tool named ${JSON.stringify(args.tool.slice(0, 200))} behind this gateway`);
    const callArgs = args.arguments === undefined ? {} : args.arguments;
    if (!callArgs || typeof callArgs !== "object" || Array.isArray(callArgs)) return refusal("arguments must be an object: the arguments of the earlier call");
    const found = effectiveRule(deps.config.tools, [t.name, `${t.upstream}.${t.upstreamName}`, t.upstreamName], t.tool.annotations);
    const named = callerId(callArgs as Record<string, unknown>, found.rule.operation_id_from);
    if (named && "refused" in named) return refusal(`arguments: ${named.refused}`);
    id = named?.id ?? deps.lastOperation(t, callArgs as Record<string, unknown>);
    if (!id) return refusal(`tool: this gateway knows no earlier call of ${t.name} with these arguments from this agent; pass its operation_id`);
  } else {
    return refusal('send {"operation_id": "…"} (from an earlier answer), or {"tool": "…", "arguments": {…}} of an earlier call');
  }
  const read = await deps.rc.readOperation(id, { signal: ctx.signal });
  if (read.kind === "missing") return refusal(`operation_id: Reconcile has no operation ${id} that this gateway's token can read`);
  if (read.kind === "refused") return refusal(`operation_id: Reconcile refused to say (${read.status} ${read.code}: ${read.message})`);
  if (read.kind === "unreachable") return refusal(`Reconcile could not be reached (${read.error}); ask again later`);
  return statusAnswer(metaOf(read.body as OperationView, id, deps.config.reconcile.url));
}

/** The tool as tools/list shows it. */
export function statusToolDefinition(name: string): Tool {
  return {
    name,
    title: "Reconcile: did an earlier call take effect?",
    description:
      "Reconcile's verdict on an earlier tool call made through this gateway: verified (its effect was read back), uncertain (not yet known: do not build on it), divergent (it did not take effect as the tool said) or rejected, why, and whether it may be retried. Pass the operation_id an earlier answer named (in its text or _meta[\"reconcile/outcome\"]), or the tool and arguments of that call.",
    inputSchema: {
      type: "object",
      properties: {
        operation_id: { type: "string", description: "The operation an earlier answer named." },
        tool: { type: "string", description: "Instead of operation_id: the tool of the earlier call…" },
        arguments: { type: "object", description: "…and its arguments, exactly as sent." },
      },
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  };
}
