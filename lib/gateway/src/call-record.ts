/**
 * What the gateway records of a call, and says of one whose fate is unknown: pure functions of
 * the call (docs/GATEWAY.md "Each tools/call" 4).
 */
import type { OperationRecord } from "@reconcile/client";
import type { CallKind } from "./config.js";
import type { RoutedTool } from "./upstreams.js";

/** The intent's record: the tool, the arguments as params, the upstream, the MCP session and request, the agent, the caller's trace context. */
export function callRecord(
  t: Pick<RoutedTool, "name" | "upstream" | "upstreamName">,
  args: Record<string, unknown>,
  ctx: { sessionId: string; requestId: string | number; client: { name: string; version?: string } | undefined; meta: Record<string, unknown> | undefined },
  id: string,
  kind: CallKind,
): OperationRecord {
  const traceparent = typeof ctx.meta?.traceparent === "string" ? ctx.meta.traceparent : null;
  const tp = traceparent ? /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(traceparent) : null;
  return {
    operation_id: id,
    trajectory_id: `mcp:${ctx.sessionId}`.slice(0, 200),
    ...(ctx.client?.name ? { agent: { name: ctx.client.name, ...(ctx.client.version ? { version: ctx.client.version } : {}) } } : {}),
    tool: { name: t.name },
    // What Reconcile does with its uncertainty: a read is never queued for review (absent: a write).
    ...(kind !== "write" ? { kind } : {}),
    intent: { target: t.upstream, effect: `call ${t.upstreamName} on ${t.upstream}`, params: args },
    mcp: { "mcp.session.id": ctx.sessionId, "jsonrpc.request.id": ctx.requestId, upstream: t.upstream, tool: t.upstreamName },
    ...(traceparent ? { otel: { traceparent, ...(tp ? { trace_id: tp[1], parent_span_id: tp[2] } : {}) } } : {}),
  };
}

/**
 * What happened to a call whose fate is unknown, in words for its attempt record. The SDK rejects
 * a cancelled request as a timeout too (RequestTimeout): whether the caller aborted says which.
 */
export function whatHappened(c: { aborted: boolean; timedOut: boolean; timeoutMs: number; upstream: string; message: string }): string {
  if (c.aborted) return "the agent cancelled the call before the upstream answered";
  if (c.timedOut) return `the upstream ${c.upstream} did not answer within ${c.timeoutMs >= 1000 ? `${Math.round(c.timeoutMs / 100) / 10} s` : `${c.timeoutMs} ms`}`;
  return `the call to the upstream ${c.upstream} failed before an answer came (${c.message})`;
}
