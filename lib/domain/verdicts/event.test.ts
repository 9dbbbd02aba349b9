import { describe, expect, it } from "vitest";
import { verdictEvent, verdictTraceContext, parseOtlpHeaders, verdictLogsUrl } from "./event";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

const state = (over: Record<string, unknown> = {}) =>
  ({
    envelope: {},
    classification: { outcome: "divergent", reason: "the write was accepted but the canonical effect is absent", failure_category: "silent_failure", observed_side_effects: [], retry: "do_not_retry", deciding_read_seq: 3, stale_read_seqs: [] },
    effective_outcome: "divergent",
    tool: "social.post",
    ...over,
  }) as never;

describe("verdictTraceContext", () => {
  it("parents to the execute_tool span an OTLP span recorded", () => {
    expect(verdictTraceContext("op-1", { otel: { trace_id: TRACE, span_id: SPAN, parent_span_id: "1111111111111111" } })).toEqual({ trace_id: TRACE, span_id: SPAN, parented: true });
  });
  it("parents to the caller's span a gateway call's traceparent names", () => {
    expect(verdictTraceContext("op-1", { otel: { traceparent: `00-${TRACE}-${SPAN}-01`, trace_id: TRACE, parent_span_id: SPAN } })).toEqual({ trace_id: TRACE, span_id: SPAN, parented: true });
  });
  it("gives an operation without a usable trace a trace of its own, the same for each of its events", () => {
    for (const otel of [undefined, { trace_id: "xyz", span_id: SPAN }, { trace_id: "0".repeat(32), span_id: SPAN }, { trace_id: TRACE, span_id: "0".repeat(16) }, { trace_id: TRACE.toUpperCase(), span_id: SPAN }, "text", [TRACE]]) {
      const c = verdictTraceContext("op-1", otel === undefined ? {} : { otel });
      expect(c.parented).toBe(false);
      expect(c.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(c.span_id).toMatch(/^[0-9a-f]{16}$/);
      expect(c).toEqual(verdictTraceContext("op-1", {}));
    }
    expect(verdictTraceContext("op-2", {}).trace_id).not.toBe(verdictTraceContext("op-1", {}).trace_id);
  });
});

describe("verdictEvent", () => {
  it("says the effective outcome as gen_ai.evaluation.result: label, value, the reason", () => {
    const e = verdictEvent({ operationId: "op-1", after: state({ envelope: { otel: { trace_id: TRACE, span_id: SPAN } } }), at: "2026-12-04T10:00:00.000Z" });
    expect(e).toEqual({
      time: "2026-12-04T10:00:00.000Z",
      trace_id: TRACE,
      span_id: SPAN,
      parented: true,
      attributes: {
        "event.name": "gen_ai.evaluation.result",
        "gen_ai.evaluation.name": "reconcile.outcome",
        "gen_ai.evaluation.score.label": "divergent",
        "gen_ai.evaluation.score.value": 0,
        "gen_ai.evaluation.explanation": "the write was accepted but the canonical effect is absent",
        "gen_ai.tool.name": "social.post",
        "reconcile.operation.id": "op-1",
        "reconcile.failure_category": "silent_failure",
      },
    });
  });
  it("scores 1 for verified, 0 for rejected, divergent and a reviewer's not_applied or compensated, none for uncertain", () => {
    const value = (o: string) => verdictEvent({ operationId: "o", after: state({ effective_outcome: o }), at: "2026-12-04T10:00:00.000Z" }).attributes["gen_ai.evaluation.score.value"];
    expect(value("verified")).toBe(1);
    for (const o of ["rejected", "divergent", "not_applied", "compensated"]) expect(value(o), o).toBe(0);
    expect(value("uncertain")).toBeUndefined();
  });
  it("adds the reviewer's reason after a correction, and a link when the public address is known", () => {
    const e = verdictEvent({ operationId: "op 1", after: state({ effective_outcome: "not_applied" }), at: "2026-12-04T10:00:00.000Z", reviewer: { action: "resolve", reason: "checked the feed by hand" }, publicUrl: "https://reconcile.example/" });
    expect(e.attributes["gen_ai.evaluation.explanation"]).toBe("the write was accepted but the canonical effect is absent; a reviewer's resolve: checked the feed by hand");
    expect(e.attributes["reconcile.link"]).toBe("https://reconcile.example/operations/op%201");
  });
  it("names the operation's project, and links into it (an operation id is unique only within its project)", () => {
    const e = verdictEvent({ operationId: "op-1", after: state(), at: "2026-12-04T10:00:00.000Z", publicUrl: "https://reconcile.example", project: "billing" });
    expect(e.attributes["reconcile.project"]).toBe("billing");
    expect(e.attributes["reconcile.link"]).toBe("https://reconcile.example/p/billing/operations/op-1");
  });
  it("bounds what it copies: a long explanation is clipped", () => {
    const e = verdictEvent({ operationId: "o", after: state(), at: "2026-12-04T10:00:00.000Z", reviewer: { action: "resolve", reason: "x".repeat(50_000) } });
    expect(String(e.attributes["gen_ai.evaluation.explanation"]).length).toBeLessThanOrEqual(2000);
  });
  it("carries no idempotency key nor any other envelope field", () => {
    const e = verdictEvent({ operationId: "o", after: state({ envelope: { idempotency: { key: "secret-key-123" }, intent: { params: { token: "t" } } } }), at: "2026-12-04T10:00:00.000Z" });
    expect(JSON.stringify(e)).not.toContain("secret-key-123");
    expect(JSON.stringify(e)).not.toContain("token");
  });
});

describe("settings", () => {
  it("reads headers as the OTel SDK reads OTEL_EXPORTER_OTLP_HEADERS: comma-separated key=value, values percent-decoded", () => {
    expect(parseOtlpHeaders("Authorization=Basic%20cGs6c2s=, x-team = a%2Cb ,bad,=x")).toEqual({ Authorization: "Basic cGs6c2s=", "x-team": "a,b" });
    expect(parseOtlpHeaders(undefined)).toEqual({});
  });
  it("sends to /v1/logs under a base URL, or to the full URL given", () => {
    expect(verdictLogsUrl("http://collector:4318")).toBe("http://collector:4318/v1/logs");
    expect(verdictLogsUrl("https://cloud.langfuse.com/api/public/otel/")).toBe("https://cloud.langfuse.com/api/public/otel/v1/logs");
    expect(verdictLogsUrl("http://collector:4318/v1/logs")).toBe("http://collector:4318/v1/logs");
  });
});
