import { cut, isPlainObject } from "./json";
import type { OperationState } from "./operation";
import { isPossibleOperationId } from "./wire";

/**
 * OTLP across requests (docs/INTEGRATIONS.md "OTLP/HTTP traces"). A tool span exported before
 * its `invoke_agent` ancestor (a span processor that exports each span as it ends) is recorded
 * with the trace id as its trajectory and the resource's service as its agent: nothing in its
 * request names the conversation. What the trace's other spans say later is kept per trace
 * (otel_trace_links), and the projection derives the link from it; the records stay as they
 * were sent, so a span sent again is still the same record.
 */
export type TraceLink = { conversation: string | null; agent: string | null };

/** Agent names are short text on the wire (4,096 characters): cut like tool names. */
export const MAX_LINK_AGENT_CHARS = 4000;

const TRACE_ID = /^[0-9a-f]{32}$/;

/** A link's values as stored: a conversation that could not be a trajectory id is not kept (null), an agent name is cut to fit. */
export function linkOf(conversation: string | null, agent: string | null): TraceLink {
  return {
    conversation: conversation !== null && isPossibleOperationId(conversation) ? conversation : null,
    agent: agent ? cut(agent, MAX_LINK_AGENT_CHARS) : null,
  };
}

/**
 * The trace whose link an operation takes, or null: an operation recorded from an OTLP span
 * (its envelope's `otel.trace_id`) whose trajectory is still that trace id, because no span of
 * its request named the conversation. One whose request named it keeps what its record says.
 */
export function waitingTrace(state: OperationState): string | null {
  const otel = state.envelope.otel;
  if (!isPlainObject(otel) || typeof otel.trace_id !== "string" || !TRACE_ID.test(otel.trace_id)) return null;
  return state.trajectory_id === otel.trace_id ? otel.trace_id : null;
}

/** The state with the trace's conversation as its trajectory and the trace's agent as its agent, where the link has them. */
export function linkedState(state: OperationState, link: TraceLink | undefined): OperationState {
  if (!link || (!link.conversation && !link.agent)) return state;
  return { ...state, trajectory_id: link.conversation ?? state.trajectory_id, agent: link.agent ?? state.agent };
}

/**
 * A stored link and what a later request says of the same trace: each field keeps the first
 * value it was given (a conversation named later by another span of the trace changes nothing).
 * `changed`: the stored link gains a value.
 */
export function mergeLinks(stored: TraceLink | undefined, incoming: TraceLink): { link: TraceLink; changed: boolean } {
  const link = { conversation: stored?.conversation ?? incoming.conversation, agent: stored?.agent ?? incoming.agent };
  return { link, changed: link.conversation !== (stored?.conversation ?? null) || link.agent !== (stored?.agent ?? null) };
}
