import { linkOf, mergeLinks, type TraceLink } from "@/lib/domain/trace-link";
import type { AttrValue, Span } from "./spans";

/**
 * What the spans of one request say of their traces (lib/domain/trace-link.ts): the
 * conversation (`gen_ai.conversation.id` on any span) and the agent (`gen_ai.agent.name` on an
 * `invoke_agent` span). Within a request, as across requests, the first span to name each wins.
 * Pure: the same spans give the same links.
 */

/** Traces whose link one request may set, at most (like MAX_TOOL_SPANS); the spans of the others are counted in partialSuccess. */
export const MAX_LINKED_TRACES = 10_000;

const str = (v: AttrValue | undefined): string | null => (typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : null);

/** Collects the links span by span (so that the caller can pace the work), or all at once with traceLinksOf. */
export class TraceLinks {
  readonly links = new Map<string, TraceLink>();
  /** Spans that named a conversation or agent of a trace past the first MAX_LINKED_TRACES. */
  overCap = 0;

  add(span: Span): void {
    const a = span.attributes;
    const conversation = str(a["gen_ai.conversation.id"]);
    const agentName = a["gen_ai.operation.name"] === "invoke_agent" ? str(a["gen_ai.agent.name"]) : null;
    if (!conversation && !agentName) return;
    const said = linkOf(conversation, agentName);
    if (!said.conversation && !said.agent) return;
    const known = this.links.get(span.traceId);
    if (!known && this.links.size >= MAX_LINKED_TRACES) {
      this.overCap++;
      return;
    }
    this.links.set(span.traceId, mergeLinks(known, said).link);
  }
}

export function traceLinksOf(spans: Iterable<Span>): TraceLinks {
  const out = new TraceLinks();
  for (const span of spans) out.add(span);
  return out;
}
