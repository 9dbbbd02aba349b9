import { describe, expect, it } from "vitest";
import { callRecord, whatHappened } from "./call-record";

const t = { name: "social.publish", upstream: "tools", upstreamName: "social.publish" };
const ctx = { sessionId: "s-1", requestId: 7, client: { name: "agent", version: "1.0" }, meta: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" } };

describe("what the gateway records of a call", () => {
  it("the intent with the session, request, agent and trace context; a kind only when not a write", () => {
    expect(callRecord(t, { text: "hi" }, ctx, "op-1", "write")).toEqual({
      operation_id: "op-1",
      trajectory_id: "mcp:s-1",
      agent: { name: "agent", version: "1.0" },
      tool: { name: "social.publish" },
      intent: { target: "tools", effect: "call social.publish on tools", params: { text: "hi" } },
      mcp: { "mcp.session.id": "s-1", "jsonrpc.request.id": 7, upstream: "tools", tool: "social.publish" },
      otel: { traceparent: ctx.meta.traceparent, trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", parent_span_id: "00f067aa0ba902b7" },
    });
    expect(callRecord(t, {}, { ...ctx, client: undefined, meta: undefined }, "op-2", "idempotent")).toMatchObject({ kind: "idempotent" });
    expect(callRecord(t, {}, { ...ctx, meta: { traceparent: "junk" } }, "op-3", "write").otel).toEqual({ traceparent: "junk" });
  });

  it("says what happened to a call whose fate is unknown: a cancellation, a timeout in s or ms, a failure", () => {
    const base = { aborted: false, timedOut: false, timeoutMs: 60_000, upstream: "fast", message: "socket hang up" };
    expect(whatHappened({ ...base, aborted: true, timedOut: true })).toBe("the agent cancelled the call before the upstream answered");
    expect(whatHappened({ ...base, timedOut: true })).toBe("the upstream fast did not answer within 60 s");
    expect(whatHappened({ ...base, timedOut: true, timeoutMs: 300 })).toBe("the upstream fast did not answer within 300 ms");
    expect(whatHappened(base)).toBe("the call to the upstream fast failed before an answer came (socket hang up)");
  });
});
