import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { operationRecordSchema } from "@/lib/domain/wire";
import { decodeRequest, encodeJsonRequest } from "./decode";
import { OtlpShapeError, spansOf, type Span } from "./spans";
import { jsonValue, MAX_COPIED_ATTRIBUTES, MAX_VALUE_BYTES, receiptStatusOf, recordsOfSpans, resultSaysFailed } from "./tool-spans";

const fixture = (name: string) => JSON.parse(readFileSync(path.join(import.meta.dirname, "fixtures", `${name}.json`), "utf8"));
const recordsOf = (name: string) => recordsOfSpans(spansOf(fixture(name))).map((r) => r.record);
const byId = (records: Record<string, unknown>[], id: string) => records.find((r) => r.operation_id === id) as Record<string, any>;

describe("OTel GenAI execute_tool spans", () => {
  const records = recordsOf("gen-ai");

  it("only the tool spans become records (the agent and chat spans are ignored)", () => {
    expect(records.map((r) => r.operation_id)).toEqual([
      "otel:5b8efff798038103d269b633813fc60c:call_refund_1",
      "otel:5b8efff798038103d269b633813fc60c:call_refund_2",
      "otel:5b8efff798038103d269b633813fc60c:call_lookup_1",
    ]);
  });

  it("maps tool, trajectory (the conversation), agent (the invoke_agent ancestor), intent and receipt", () => {
    const r = byId(records, "otel:5b8efff798038103d269b633813fc60c:call_refund_1");
    expect(r.tool).toEqual({ name: "refund_order", type: "function" });
    expect(r.trajectory_id).toBe("conv-5531");
    expect(r.agent).toEqual({ name: "support-agent" });
    expect(r.intent).toEqual({ effect: "call refund_order", params: { order: "5531", amount_cents: 4200, reason: "damaged" }, observed_at: "2026-08-29T10:40:02.000Z" });
    expect(r.receipt).toEqual({ status: "accepted", observed_at: "2026-08-29T10:40:03.000Z", raw: { refund_id: "rf_881", status: "issued" } });
    expect(r.otel).toMatchObject({ trace_id: "5b8efff798038103d269b633813fc60c", span_id: "eee19b7ec3c1b176", parent_span_id: "eee19b7ec3c1b174", convention: "gen_ai" });
    expect(r.otel.attributes["gen_ai.tool.name"]).toBe("refund_order");
  });

  it("a timeout leaves no receipt: the call's fate is unknown", () => {
    const r = byId(records, "otel:5b8efff798038103d269b633813fc60c:call_refund_2");
    expect(r.intent.params).toEqual({ order: "5532", amount_cents: 1000 });
    expect(r.receipt).toBeUndefined();
  });

  it("a validation error is a definite refusal: rejected", () => {
    expect(byId(records, "otel:5b8efff798038103d269b633813fc60c:call_lookup_1").receipt.status).toBe("rejected");
  });
});

describe("Vercel AI SDK ai.toolCall spans", () => {
  const records = recordsOf("vercel-ai");

  it("the tool call id names the operation; the trace is the trajectory; service.name the agent", () => {
    const r = byId(records, "otel:0af7651916cd43dd8448eb211c80319c:call_x_post_001");
    expect(r.tool).toEqual({ name: "publishPost" });
    expect(r.trajectory_id).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(r.agent).toEqual({ name: "x-poster" });
    expect(r.receipt).toMatchObject({ status: "accepted", raw: { accepted: true, post_id: "1834" } });
  });

  it("a result that reports failure while the span is OK is rejected", () => {
    const r = byId(records, "otel:0af7651916cd43dd8448eb211c80319c:call_x_post_002");
    expect(r.receipt).toMatchObject({ status: "rejected", raw: { success: false } });
  });
});

describe("OpenInference TOOL spans", () => {
  const records = recordsOf("openinference");

  it("without a call id the span id names the operation; an MCP-style isError result is rejected", () => {
    const r = byId(records, "otel:4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b8");
    expect(r.tool).toEqual({ name: "cancel_order" });
    expect(r.intent.params).toEqual({ order_id: "77" });
    expect(r.receipt.status).toBe("rejected");
    expect(r.agent).toEqual({ name: "langgraph-orders" });
  });

  it("plain-text input and output are kept as text (params wrap a non-object)", () => {
    const r = byId(records, "otel:4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b9");
    expect(r.intent.params).toEqual({ input: "Paris" });
    expect(r.receipt).toMatchObject({ status: "accepted", raw: "sunny, 21 °C" });
  });
});

describe("OpenLLMetry tool spans and reconcile.* attributes", () => {
  const records = recordsOf("traceloop");

  it("reconcile.* attributes carry what spans cannot: operation id, idempotency, claim, target, dependencies", () => {
    const r = records[0] as Record<string, any>;
    expect(r.operation_id).toBe("email-refund-5531");
    expect(r.idempotency).toEqual({ key: "email-5531", enforced: true });
    expect(r.claimed_outcome).toBe("success");
    expect(r.intent.target).toBe("mailbox ops@example.com");
    expect(r.depends_on).toEqual(["otel:5b8efff798038103d269b633813fc60c:call_refund_1"]);
    expect(r.tool).toEqual({ name: "send_email" });
    expect(r.receipt.status).toBe("accepted");
  });

  it("a 5xx call leaves no receipt", () => {
    const r = byId(records, "otel:a3ce929d0e0e47364bf92f3577b34da6:53995c3f42cd8ada");
    expect(r.intent).toBeDefined();
    expect(r.receipt).toBeUndefined();
  });

  it("a span with reconcile.canonical_read.* is a canonical read of the named operation (observed at the span's end), with no envelope a verifier could not send", () => {
    const read = records.filter((r) => r.operation_id === "email-refund-5531")[1] as Record<string, any>;
    expect(read).toEqual({
      operation_id: "email-refund-5531",
      canonical_read: { status: "match", observed_at: "2026-08-29T10:40:06.000Z", evidence: { object_id: "m-17" }, otel: { trace_id: "a3ce929d0e0e47364bf92f3577b34da6", span_id: "53995c3f42cd8adb", span_name: "verify_email" } },
    });
  });
});

describe("every fixture record passes the ingest wire schema", () => {
  it.each(["gen-ai", "vercel-ai", "openinference", "traceloop"])("%s", (name) => {
    for (const r of recordsOf(name)) expect(operationRecordSchema.safeParse(r).success, JSON.stringify(r)).toBe(true);
  });
});

describe("protobuf and JSON give the same records", () => {
  it.each(["gen-ai", "vercel-ai", "openinference", "traceloop"])("%s", (name) => {
    const fromJson = recordsOf(name);
    const fromProto = recordsOfSpans(spansOf(decodeRequest(encodeJsonRequest(fixture(name)), "protobuf"))).map((r) => r.record);
    expect(fromProto).toEqual(fromJson);
  });
});

describe("structure", () => {
  const base = () => fixture("vercel-ai");
  it.each([
    ["a trace id of the wrong length", (f: any) => (f.resourceSpans[0].scopeSpans[0].spans[0].traceId = "abc"), /traceId must be 16 bytes/],
    ["an all-zero span id", (f: any) => (f.resourceSpans[0].scopeSpans[0].spans[1].spanId = "0000000000000000"), /spanId must not be all zeros/],
    ["a missing trace id", (f: any) => delete f.resourceSpans[0].scopeSpans[0].spans[0].traceId, /traceId is missing/],
    ["spans that are not a list", (f: any) => (f.resourceSpans[0].scopeSpans[0].spans = { a: 1 }), /spans must be a list/],
    ["a negative time", (f: any) => (f.resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano = "-5"), /startTimeUnixNano/],
  ])("%s is a shape error", (_name, mutate, message) => {
    const f = base();
    mutate(f);
    expect(() => spansOf(f)).toThrow(OtlpShapeError);
    expect(() => spansOf(f)).toThrow(message);
  });

  it("attribute values nested deeper than 32 levels are a shape error, not a stack overflow", () => {
    let value: any = { stringValue: "x" };
    for (let i = 0; i < 10_000; i++) value = { arrayValue: { values: [value] } };
    const f = base();
    f.resourceSpans[0].scopeSpans[0].spans[1].attributes.push({ key: "deep", value });
    expect(() => spansOf(f)).toThrow(/nest deeper than 32/);
  });

  it("malformed protobuf is a shape error", () => {
    expect(() => decodeRequest(Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 1, 2]), "protobuf")).toThrow(OtlpShapeError);
  });

  it("a parent cycle ends the ancestor walk", () => {
    const f = base();
    const spans = f.resourceSpans[0].scopeSpans[0].spans;
    spans[0].parentSpanId = spans[1].spanId;
    expect(recordsOfSpans(spansOf(f))).toHaveLength(2);
  });
});

describe("limits", () => {
  it("a result bigger than the value cap is kept as a cut preview, and the record stays well under 1 MiB", () => {
    const big = JSON.stringify({ rows: "x".repeat(MAX_VALUE_BYTES) });
    const v = jsonValue(big) as Record<string, unknown>;
    expect(v).toMatchObject({ truncated: true, bytes: big.length });
    expect(String(v.preview).length).toBeLessThanOrEqual(4096);
  });

  it("a preview never ends inside a surrogate pair", () => {
    const v = jsonValue("a" + "😀".repeat(MAX_VALUE_BYTES)) as { preview: string };
    expect(v.preview).not.toMatch(/[\uD800-\uDBFF]$/);
  });

  it("at most 128 attributes are copied onto the record, and the number dropped is said", () => {
    const f = fixture("vercel-ai");
    const attrs = f.resourceSpans[0].scopeSpans[0].spans[1].attributes;
    for (let i = 0; i < 100_000; i++) attrs.push({ key: `k${i}`, value: { intValue: String(i) } });
    const [r] = recordsOfSpans(spansOf(f)).map((x) => x.record as Record<string, any>);
    expect(Object.keys(r.otel.attributes)).toHaveLength(MAX_COPIED_ATTRIBUTES);
    expect(r.otel.attributes_dropped).toBe(attrs.length - MAX_COPIED_ATTRIBUTES);
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThan(1024 * 1024);
  });
});

describe("the receipt rule", () => {
  const span = (attributes: Record<string, unknown>, code = 0, endNs = 2n): Span =>
    ({ traceId: "a".repeat(32), spanId: "b".repeat(16), parentSpanId: null, name: "t", kind: 1, startNs: 1n, endNs, status: { code, message: "" }, attributes, resource: {}, scope: { name: "", version: "" } }) as Span;
  it.each([
    ["ok, no result", {}, 0, null, "accepted"],
    ["ok status", {}, 1, { id: 1 }, "accepted"],
    ["ok: false", {}, 0, { ok: false }, "rejected"],
    ["success: false", {}, 1, { success: false }, "rejected"],
    ["isError: true", {}, 0, { isError: true }, "rejected"],
    ["an error object", {}, 0, { error: { code: "x" } }, "rejected"],
    ["an error string is not a failure report", {}, 0, { error: "none" }, "accepted"],
    ["HTTP 404", { "http.response.status_code": 404 }, 2, null, "rejected"],
    ["HTTP 429", { "http.response.status_code": 429 }, 2, null, "rejected"],
    ["HTTP 408 (a timeout)", { "http.response.status_code": 408 }, 2, null, null],
    ["HTTP 502", { "http.response.status_code": 502 }, 2, null, null],
    ["error.type timeout", { "error.type": "timeout" }, 2, null, null],
    ["error.type java.net.SocketTimeoutException", { "error.type": "java.net.SocketTimeoutException" }, 2, null, null],
    ["error.type ValidationError", { "error.type": "ValidationError" }, 2, null, "rejected"],
    ["error.type PermissionDenied", { "error.type": "PermissionDenied" }, 2, null, "rejected"],
    ["error status, no type", {}, 2, null, null],
    ["error.type _OTHER on an OK span", { "error.type": "_OTHER" }, 0, null, null],
  ])("%s", (_name, attrs, code, result, expected) => {
    expect(receiptStatusOf(span(attrs, code as number), result)).toBe(expected);
  });

  it("no end time, no receipt", () => {
    expect(receiptStatusOf(span({}, 1, 0n), null)).toBeNull();
  });

  it("failure shapes", () => {
    expect(resultSaysFailed({ isError: false })).toBe(false);
    expect(resultSaysFailed([{ ok: false }])).toBe(false);
    expect(resultSaysFailed("failed")).toBe(false);
  });
});

describe("what the attack review found", () => {
  const tool = (i: number, parent: string | null) => ({
    traceId: "c".repeat(32),
    spanId: (i + 1).toString(16).padStart(16, "0"),
    ...(parent ? { parentSpanId: parent } : {}),
    name: "ai.toolCall",
    startTimeUnixNano: "1788000000000000000",
    endTimeUnixNano: "1788000001000000000",
    attributes: [{ key: "ai.toolCall.name", value: { stringValue: "t" } }],
  });

  it("20,000 tool spans each the parent of the next: every one inherits the conversation and agent, in one pass (quadratic before)", () => {
    const root = { ...tool(-1, null), spanId: "f".repeat(16), name: "invoke_agent", attributes: [
      { key: "gen_ai.operation.name", value: { stringValue: "invoke_agent" } },
      { key: "gen_ai.agent.name", value: { stringValue: "deep-agent" } },
      { key: "gen_ai.conversation.id", value: { stringValue: "conv-deep" } },
    ] };
    const spans: any[] = [root];
    for (let i = 0; i < 20_000; i++) spans.push(tool(i, spans[spans.length - 1].spanId));
    const records = recordsOfSpans(spansOf({ resourceSpans: [{ scopeSpans: [{ spans }] }] })).map((r) => r.record as Record<string, any>);
    expect(records).toHaveLength(20_000);
    expect(new Set(records.map((r) => r.trajectory_id))).toEqual(new Set(["conv-deep"]));
    expect(new Set(records.map((r) => r.agent.name))).toEqual(new Set(["deep-agent"]));
  });

  it("a result that says it failed is a rejection even on an error span", () => {
    const span = spansOf({ resourceSpans: [{ scopeSpans: [{ spans: [{ ...tool(0, null), status: { code: 2 } }] }] }] })[0];
    expect(receiptStatusOf(span, { isError: true })).toBe("rejected");
    expect(receiptStatusOf(span, null)).toBeNull();
  });

  it.each([
    ["ResponseValidationError", null],
    ["OutputValidationError", null],
    ["AI_NoSuchToolError", "rejected"],
    ["InputValidationError", "rejected"],
  ])("error.type %s → %s", (errorType, expected) => {
    const span = spansOf({ resourceSpans: [{ scopeSpans: [{ spans: [{ ...tool(0, null), status: { code: 2 }, attributes: [{ key: "error.type", value: { stringValue: errorType } }] }] }] }] })[0];
    expect(receiptStatusOf(span, null)).toBe(expected);
  });

  it("NaN and Infinity are kept as text; a time sent as a large number is taken; __proto__ is dropped", () => {
    const [span] = spansOf({ resourceSpans: [{ scopeSpans: [{ spans: [{ ...tool(0, null), startTimeUnixNano: 1780000000000000000, attributes: [
      { key: "cost", value: { doubleValue: NaN } },
      { key: "ceiling", value: { doubleValue: "Infinity" } },
      { key: "__proto__", value: { stringValue: "x" } },
    ] }] }] }] });
    expect(span.attributes.cost).toBe("NaN");
    expect(span.attributes.ceiling).toBe("Infinity");
    expect(Object.keys(span.attributes)).toEqual(["cost", "ceiling"]);
    expect(span.startNs).toBe(1780000000000000000n);
  });

  it("half a surrogate pair or a NUL becomes U+FFFD, so the record is storable in either encoding", () => {
    const f = fixture("vercel-ai");
    const attrs = f.resourceSpans[0].scopeSpans[0].spans[1].attributes;
    attrs.find((a: any) => a.key === "ai.toolCall.result").value.stringValue = '{"text":"ok \ud83d';
    attrs.push({ key: "note", value: { stringValue: "a\u0000b" } });
    const fromJson = recordsOfSpans(spansOf(f)).map((r) => r.record as Record<string, any>);
    expect(fromJson[0].receipt.raw).toBe('{"text":"ok \ufffd');
    expect(fromJson[0].otel.attributes.note).toBe("a\ufffdb");
    for (const r of fromJson) expect(operationRecordSchema.safeParse(r).success).toBe(true);
    // Through protobuf the half pair is whatever the encoder made of it (protobufjs: three bytes
    // that decode as three U+FFFD): storable too, if not the same text.
    const fromProto = recordsOfSpans(spansOf(decodeRequest(encodeJsonRequest(f), "protobuf"))).map((r) => r.record as Record<string, any>);
    expect(fromProto[0].receipt.raw).toMatch(/^\{"text":"ok \ufffd+$/);
    expect(fromProto[0].otel.attributes.note).toBe("a\ufffdb");
    for (const r of fromProto) expect(operationRecordSchema.safeParse(r).success).toBe(true);
  });

  it("arguments nested just under the record's limit stay text; evidence that is a list is wrapped", () => {
    const deep = `${"[".repeat(62)}1${"]".repeat(62)}`;
    expect(jsonValue(deep)).toBe(deep);
    const f = fixture("traceloop");
    const read = f.resourceSpans[0].scopeSpans[0].spans[3];
    read.attributes.find((a: any) => a.key === "reconcile.canonical_read.evidence").value.stringValue = '["a","b"]';
    const r = recordsOfSpans(spansOf(f)).map((x) => x.record as Record<string, any>).find((x) => x.canonical_read)!;
    expect(r.canonical_read.evidence).toEqual({ value: ["a", "b"] });
    expect(operationRecordSchema.safeParse(r).success).toBe(true);
  });
});
