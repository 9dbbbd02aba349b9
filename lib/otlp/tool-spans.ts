import { checkJsonShape, cut, isPlainObject, MAX_DEPTH } from "@/lib/domain/json";
import { isPossibleOperationId } from "@/lib/domain/wire";
import { instantOf, type AttrValue, type Attributes, type Span } from "./spans";

/**
 * Which spans are tool calls, and the operation record each becomes (docs/INTEGRATIONS.md
 * "OTLP/HTTP traces"). Pure: the same spans always give the same records, so a batch an
 * exporter sends again stores nothing new (ingest's idempotency).
 */

export type Convention = "gen_ai" | "vercel_ai" | "openinference" | "traceloop";

type ToolKeys = { name: string; callId: string | null; args: string; result: string };

/** The four conventions in the order they are tried: the first that matches a span decides. */
const CONVENTIONS: { convention: Convention; matches: (s: Span) => boolean; keys: ToolKeys }[] = [
  {
    convention: "gen_ai",
    matches: (s) => s.attributes["gen_ai.operation.name"] === "execute_tool",
    keys: { name: "gen_ai.tool.name", callId: "gen_ai.tool.call.id", args: "gen_ai.tool.call.arguments", result: "gen_ai.tool.call.result" },
  },
  {
    convention: "vercel_ai",
    matches: (s) => s.name === "ai.toolCall",
    keys: { name: "ai.toolCall.name", callId: "ai.toolCall.id", args: "ai.toolCall.args", result: "ai.toolCall.result" },
  },
  {
    convention: "openinference",
    matches: (s) => s.attributes["openinference.span.kind"] === "TOOL",
    keys: { name: "tool.name", callId: "tool_call.id", args: "input.value", result: "output.value" },
  },
  {
    convention: "traceloop",
    matches: (s) => s.attributes["traceloop.span.kind"] === "tool",
    keys: { name: "traceloop.entity.name", callId: null, args: "traceloop.entity.input", result: "traceloop.entity.output" },
  },
];

export function conventionOf(span: Span): (typeof CONVENTIONS)[number] | null {
  return CONVENTIONS.find((c) => c.matches(span)) ?? null;
}

/** Arguments and results bigger than this (as JSON text) are kept as a cut preview, so that the record stays within ingest's limits. */
export const MAX_VALUE_BYTES = 256 * 1024;
const PREVIEW_CHARS = 4096;
/** The span's attributes are copied onto the record for the page's "raw" view: at most this many, each text cut to this length. */
export const MAX_COPIED_ATTRIBUTES = 128;
const MAX_COPIED_TEXT = 2048;

const str = (v: AttrValue | undefined): string | null => (typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : null);

/** A value that may be JSON text: parsed when it is, kept as it is otherwise; too big or too deep → a preview. */
export function jsonValue(v: AttrValue | undefined): unknown {
  if (v === undefined) return undefined;
  const text = typeof v === "string" ? v : JSON.stringify(v);
  if (Buffer.byteLength(text) > MAX_VALUE_BYTES) {
    return { truncated: true, bytes: Buffer.byteLength(text), preview: cut(text, PREVIEW_CHARS) };
  }
  if (typeof v !== "string") return v;
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    return v; // plain text, or a stack-deep document: kept as the text it is
  }
  // Arguments land under intent.params, results under receipt.raw: a record's nesting limit minus those levels.
  return checkJsonShape(parsed, MAX_DEPTH - 3) ? v : parsed;
}

/** Params must be an object: anything else is wrapped as `{input: …}`. */
function paramsOf(v: AttrValue | undefined): Record<string, unknown> | undefined {
  const parsed = jsonValue(v);
  if (parsed === undefined) return undefined;
  return isPlainObject(parsed) ? parsed : { input: parsed };
}

/** The result reports a failure in one of the shapes tools use. */
export function resultSaysFailed(result: unknown): boolean {
  if (!isPlainObject(result)) return false;
  return result.isError === true || result.ok === false || result.success === false || isPlainObject(result.error);
}

/**
 * Error types that mean the call was refused (it did not happen), rather than that its fate is
 * unknown. A validation error counts only on the way in: a response or output that failed
 * validation came back from a call that may well have happened.
 */
const REFUSED = /valid|refus|reject|forbidden|unauthori[sz]ed|permission|denied|not.?found|no.?such.?tool|bad.?request|conflict|unprocessable|precondition|rate.?limit|too.?many.?requests/i;
const AFTER_THE_CALL = /response|output|result/i;

/**
 * The receipt a span supports: accepted, rejected, or none at all when the call's fate is
 * unknown (a timeout, a cancelled or 5xx call, an error of unknown type).
 */
export function receiptStatusOf(span: Span, result: unknown): "accepted" | "rejected" | null {
  if (span.endNs <= 0n) return null;
  // The result's own word first: a tool that answered "failed" was heard from, whatever the span's status.
  if (resultSaysFailed(result)) return "rejected";
  const http = span.attributes["http.response.status_code"] ?? span.attributes["http.status_code"];
  const httpStatus = typeof http === "number" ? http : typeof http === "string" && /^\d{3}$/.test(http) ? Number(http) : null;
  const errorType = str(span.attributes["error.type"]);
  if (httpStatus !== null && httpStatus >= 500) return null;
  if (httpStatus === 408) return null;
  if (httpStatus !== null && httpStatus >= 400) return "rejected";
  if (errorType && REFUSED.test(errorType) && !AFTER_THE_CALL.test(errorType)) return "rejected";
  if (span.status.code === 2 || errorType) return null; // an error of unknown type: fate unknown
  return "accepted";
}

/** Tool call ids go into the operation id: only ones that could be part of an id at all. */
function usableCallId(v: AttrValue | undefined): string | null {
  const id = str(v);
  if (!id || id.toLowerCase() === "unknown") return null;
  return isPossibleOperationId(`otel:${"0".repeat(32)}:${id}`) ? id : null;
}

function stringArray(v: AttrValue | undefined): string[] | undefined {
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v as string[];
  if (typeof v === "string") {
    const parsed = jsonValue(v);
    if (Array.isArray(parsed) && parsed.every((x) => typeof x === "string")) return parsed;
  }
  return undefined;
}

function copiedAttributes(attrs: Attributes): { attributes: Record<string, unknown>; dropped: number } {
  const keys = Object.keys(attrs);
  const kept = keys.slice(0, MAX_COPIED_ATTRIBUTES).map((k) => {
    const v = attrs[k];
    if (typeof v === "string") return [k, v.length > MAX_COPIED_TEXT ? `${cut(v, MAX_COPIED_TEXT)}…` : v];
    const json = JSON.stringify(v);
    return [k, json.length > MAX_COPIED_TEXT ? `${cut(json, MAX_COPIED_TEXT)}…` : v];
  });
  return { attributes: Object.fromEntries(kept), dropped: keys.length - kept.length };
}

/** What a span inherits from its ancestors in the same request: the conversation, and the agent above it. */
type Lineage = { conversation: string | null; agent: string | null };

/**
 * Each span's lineage, memoised so that the whole request costs one step per span however the
 * spans nest (a chain of 16,000 spans each the parent of the next walked 128 million ancestors
 * before). A parent that is missing, or a cycle of bad parent ids, ends the walk.
 */
function lineages(spans: Span[]): (span: Span) => Lineage {
  const byId = new Map(spans.map((s) => [`${s.traceId}:${s.spanId}`, s]));
  const done = new Map<Span, Lineage>();
  const root: Lineage = { conversation: null, agent: null };
  const parentOf = (s: Span) => (s.parentSpanId ? byId.get(`${s.traceId}:${s.parentSpanId}`) : undefined);
  // What a child of `s` inherits: s's own conversation or what s inherited; s's agent if s is an invoke_agent span.
  const passedOn = (s: Span, own: Lineage): Lineage => ({
    conversation: str(s.attributes["gen_ai.conversation.id"]) ?? own.conversation,
    agent: s.attributes["gen_ai.operation.name"] === "invoke_agent" && str(s.attributes["gen_ai.agent.name"]) ? str(s.attributes["gen_ai.agent.name"]) : own.agent,
  });
  return (span) => {
    // Up to the first span already known (or the root), then back down, filling in.
    const path: Span[] = [];
    const onPath = new Set<Span>();
    let at: Span | undefined = span;
    while (at && !done.has(at) && !onPath.has(at)) {
      path.push(at);
      onPath.add(at);
      at = parentOf(at);
    }
    let inherited = at && done.has(at) ? passedOn(at, done.get(at)!) : root;
    for (let i = path.length - 1; i >= 0; i--) {
      done.set(path[i], inherited);
      inherited = passedOn(path[i], inherited);
    }
    return done.get(span)!;
  };
}

export type SpanRecord = { span: Span; record: Record<string, unknown> };

/**
 * The records the spans of one request become: one per tool span, and one per span that carries
 * a canonical read (`reconcile.canonical_read.status` with `reconcile.operation_id`). Every other
 * span is ignored, not rejected.
 */
export function recordsOfSpans(spans: Span[]): SpanRecord[] {
  return [...eachRecord(spans)];
}

/** The records one at a time (see eachSpan). */
export function* eachRecord(spans: Span[]): Generator<SpanRecord> {
  const lineageOf = lineages(spans);
  for (const span of spans) {
    const record = recordOfSpan(span, () => lineageOf(span));
    if (record) yield { span, record };
  }
}

function recordOfSpan(span: Span, lineage: () => Lineage): Record<string, unknown> | null {
  const a = span.attributes;
  const rule = conventionOf(span);
  const readStatus = str(a["reconcile.canonical_read.status"]);
  const explicitId = str(a["reconcile.operation_id"]);
  if (!rule && !(readStatus && explicitId)) return null;

  // A span that only reports a canonical read (a verifier's check, say) carries the read alone:
  // envelope fields are the agent's own account (TRUST.md), which a verifier may not add to.
  if (!rule) {
    return { operation_id: explicitId, canonical_read: readOf(span, a, readStatus!, { trace_id: span.traceId, span_id: span.spanId, span_name: span.name }) };
  }

  const callId = rule?.keys.callId ? usableCallId(a[rule.keys.callId]) : null;
  const operationId = explicitId ?? `otel:${span.traceId}:${callId ?? span.spanId}`;
  const start = instantOf(span.startNs);
  const end = instantOf(span.endNs);
  const { attributes, dropped } = copiedAttributes(a);
  const record: Record<string, unknown> = {
    operation_id: operationId,
    otel: {
      trace_id: span.traceId,
      span_id: span.spanId,
      ...(span.parentSpanId ? { parent_span_id: span.parentSpanId } : {}),
      span_name: span.name,
      ...(rule ? { convention: rule.convention } : {}),
      ...(span.status.code ? { status: { code: span.status.code === 2 ? "error" : "ok", ...(span.status.message ? { message: span.status.message } : {}) } } : {}),
      ...(start ? { start } : {}),
      ...(end ? { end } : {}),
      attributes,
      ...(dropped ? { attributes_dropped: dropped } : {}),
    },
  };

  const inherited = lineage();
  record.trajectory_id = str(a["gen_ai.conversation.id"]) ?? inherited.conversation ?? span.traceId;
  const agent = inherited.agent ?? str(span.resource["service.name"]);
  if (agent) record.agent = { name: agent };
  const dependsOn = stringArray(a["reconcile.depends_on"]);
  if (dependsOn) record.depends_on = dependsOn;
  const claimed = str(a["reconcile.claimed_outcome"]);
  if (claimed) record.claimed_outcome = claimed;
  const key = str(a["reconcile.idempotency.key"]);
  const enforced = a["reconcile.idempotency.enforced"];
  if (key || typeof enforced === "boolean") record.idempotency = { ...(key ? { key } : {}), ...(typeof enforced === "boolean" ? { enforced } : {}) };

  if (rule) {
    // Names and effects are short text (4,096 characters) on the wire.
    const toolName = cut(str(a[rule.keys.name]) ?? "unknown tool", 4000);
    const toolType = str(a["gen_ai.tool.type"]);
    record.tool = { name: toolName, ...(toolType ? { type: toolType } : {}) };
    const params = paramsOf(a[rule.keys.args]);
    const target = str(a["reconcile.intent.target"]);
    const fingerprint = str(a["reconcile.intent.fingerprint"]);
    record.intent = {
      effect: `call ${toolName}`,
      ...(target ? { target } : {}),
      ...(fingerprint ? { fingerprint } : {}),
      ...(params ? { params } : {}),
      ...(start ? { observed_at: start } : {}),
    };
    const result = jsonValue(a[rule.keys.result]);
    const status = receiptStatusOf(span, result);
    if (status && end) record.receipt = { status, observed_at: end, ...(result !== undefined ? { raw: result } : {}) };
  }

  if (readStatus && explicitId) record.canonical_read = readOf(span, a, readStatus);
  return record;
}

/** Evidence is text (at most 64 KiB) or an object on the wire: anything else is wrapped or cut to fit. */
function evidenceOf(v: AttrValue | undefined): unknown {
  const e = jsonValue(v);
  if (e === undefined || e === null) return undefined;
  if (typeof e === "string") return cut(e, 65536);
  return isPlainObject(e) ? e : { value: e };
}

function readOf(span: Span, a: Attributes, status: string, otel?: Record<string, string>): Record<string, unknown> {
  const evidence = evidenceOf(a["reconcile.canonical_read.evidence"]);
  return {
    status,
    observed_at: str(a["reconcile.canonical_read.observed_at"]) ?? instantOf(span.endNs) ?? instantOf(span.startNs),
    ...(evidence !== undefined ? { evidence } : {}),
    ...(otel ? { otel } : {}),
  };
}
