import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { deriveOperation, type StoredStage } from "@/lib/domain/operation";
import { splitRecord } from "@/lib/domain/stages";
import { linkedState, linkOf, mergeLinks, waitingTrace } from "@/lib/domain/trace-link";
import { spansOf, type Span } from "./spans";
import { recordsOfSpans } from "./tool-spans";
import { MAX_LINKED_TRACES, traceLinksOf } from "./trace-links";

const TRACE = "5b8efff798038103d269b633813fc60c";
const spans = spansOf(JSON.parse(readFileSync(path.join(import.meta.dirname, "fixtures", "gen-ai.json"), "utf8")));
const agentSpan = spans.find((s) => s.attributes["gen_ai.operation.name"] === "invoke_agent")!;
const toolSpans = spans.filter((s) => s.attributes["gen_ai.operation.name"] === "execute_tool");

/** The state of one record as the projection derives it. */
function stateOf(record: Record<string, unknown>) {
  const stages: StoredStage[] = splitRecord(record).map((d, i) => ({ seq: i + 1, stage: d.stage, observed_at: d.observed_at, recorded_at: "2026-08-29T10:41:00.000Z", data: d.payload, envelope: d.envelope }));
  return deriveOperation(String(record.operation_id), stages);
}

describe("a tool span exported before its invoke_agent ancestor", () => {
  const alone = recordsOfSpans(toolSpans).map((r) => r.record);
  const together = recordsOfSpans(spans).map((r) => r.record);

  it("is recorded with the trace as its trajectory and waits on the trace; one sent with its ancestor does not wait", () => {
    expect(alone[0].trajectory_id).toBe(TRACE);
    expect(waitingTrace(stateOf(alone[0]))).toBe(TRACE);
    expect(together[0].trajectory_id).toBe("conv-5531");
    expect(waitingTrace(stateOf(together[0]))).toBeNull();
  });

  it("takes the conversation and agent the ancestor brings later, as if they had come together", () => {
    const { links } = traceLinksOf([agentSpan]);
    expect(links).toEqual(new Map([[TRACE, { conversation: "conv-5531", agent: "support-agent" }]]));
    const linked = linkedState(stateOf(alone[0]), links.get(TRACE));
    const direct = stateOf(together[0]);
    expect({ trajectory: linked.trajectory_id, agent: linked.agent }).toEqual({ trajectory: direct.trajectory_id, agent: direct.agent });
  });

  it("tool spans that name no conversation say nothing of their trace", () => {
    expect(traceLinksOf(toolSpans).links.size).toBe(0);
  });
});

const span = (traceId: string, attributes: Span["attributes"]): Span => ({
  ...agentSpan,
  traceId,
  attributes,
});

describe("what a request says of its traces", () => {
  it("first wins, per field: a later span naming another conversation or agent changes nothing", () => {
    const { links } = traceLinksOf([
      span(TRACE, { "gen_ai.conversation.id": "conv-a" }),
      span(TRACE, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "first", "gen_ai.conversation.id": "conv-b" }),
      span(TRACE, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "second" }),
    ]);
    expect(links.get(TRACE)).toEqual({ conversation: "conv-a", agent: "first" });
    expect(mergeLinks({ conversation: "conv-a", agent: null }, { conversation: "conv-b", agent: "x" })).toEqual({ link: { conversation: "conv-a", agent: "x" }, changed: true });
    expect(mergeLinks({ conversation: "conv-a", agent: "x" }, { conversation: "conv-b", agent: "y" })).toEqual({ link: { conversation: "conv-a", agent: "x" }, changed: false });
  });

  it("an agent name counts only on an invoke_agent span; a conversation that could not be a trajectory id is not kept", () => {
    expect(traceLinksOf([span(TRACE, { "gen_ai.agent.name": "not an agent span" })]).links.size).toBe(0);
    for (const bad of ["has space", "a/b", "x".repeat(201), "nul\u0000"]) expect(linkOf(bad, null)).toEqual({ conversation: null, agent: null });
    expect(linkOf("c", "a".repeat(5000)).agent).toHaveLength(4000);
    expect(traceLinksOf([span(TRACE, { "gen_ai.conversation.id": "two words" })]).links.size).toBe(0);
  });

  it(`keeps the links of at most ${MAX_LINKED_TRACES.toLocaleString("en")} traces a request and counts the spans of the rest`, () => {
    const many = Array.from({ length: MAX_LINKED_TRACES + 3 }, (_, i) => span(i.toString(16).padStart(32, "0"), { "gen_ai.conversation.id": `c${i}` }));
    const out = traceLinksOf([...many, span(many[0].traceId, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a" })]);
    expect(out.links.size).toBe(MAX_LINKED_TRACES);
    expect(out.overCap).toBe(3);
    expect(out.links.get(many[0].traceId)).toEqual({ conversation: "c0", agent: "a" });
  });

  it("an operation not from a span, or whose trajectory is not its trace, never waits", () => {
    expect(waitingTrace(stateOf({ operation_id: "op-1", trajectory_id: TRACE, intent: { effect: "e" } }))).toBeNull();
    expect(waitingTrace(stateOf({ operation_id: "op-2", trajectory_id: "t", otel: { trace_id: TRACE }, intent: { effect: "e" } }))).toBeNull();
    expect(waitingTrace(stateOf({ operation_id: "op-3", trajectory_id: "T", otel: { trace_id: "T" }, intent: { effect: "e" } }))).toBeNull();
  });
});
