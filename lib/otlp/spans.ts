/**
 * OTLP trace data as plain values: one `Span` per span of an ExportTraceServiceRequest, with
 * its resource's attributes, ids in lower-case hex and times as nanosecond bigints. The same
 * code reads both encodings' object shape (OTLP JSON as parsed, or the protobuf message as
 * protobufjs's `toObject` gives it): they differ only in how ids (hex text / bytes) and 64-bit
 * integers (text / number) arrive. Anything structurally wrong is an `OtlpShapeError`, which the
 * endpoint answers with 400 before it stores anything (OTLP: undecodable or invalid → 400).
 */

export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };
export type Attributes = Record<string, AttrValue>;

export type Span = {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: number;
  startNs: bigint;
  /** 0 when the exporter sent no end (a span is exported once ended, so this is rare). */
  endNs: bigint;
  /** 0 unset, 1 ok, 2 error (OTLP's StatusCode). */
  status: { code: number; message: string };
  attributes: Attributes;
  resource: Attributes;
  scope: { name: string; version: string };
};

export class OtlpShapeError extends Error {}

/** Attribute values nest (arrays, key-value lists); deeper than this is refused. */
export const MAX_ATTRIBUTE_DEPTH = 32;

const HEX = /^[0-9a-f]*$/;

function id(value: unknown, bytes: number, what: string, required: boolean): string | null {
  let hex: string;
  if (value === undefined || value === null || value === "") hex = "";
  else if (typeof value === "string") hex = value.toLowerCase();
  else if (value instanceof Uint8Array) hex = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex");
  else throw new OtlpShapeError(`${what} must be hex text or bytes`);
  if (hex === "") {
    if (required) throw new OtlpShapeError(`${what} is missing`);
    return null;
  }
  if (hex.length !== bytes * 2 || !HEX.test(hex)) throw new OtlpShapeError(`${what} must be ${bytes} bytes (${bytes * 2} hex digits)`);
  if (/^0+$/.test(hex)) {
    if (required) throw new OtlpShapeError(`${what} must not be all zeros`);
    return null;
  }
  return hex;
}

function nanos(value: unknown, what: string): bigint {
  if (value === undefined || value === null || value === "") return 0n;
  // OTLP JSON may send a time as a number; past 2^53 it is already rounded, which a time can bear.
  if (typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 2 ** 64) return BigInt(value);
  if (typeof value === "string" && /^\d{1,20}$/.test(value)) {
    const n = BigInt(value);
    if (n <= 0xffffffffffffffffn) return n;
  }
  throw new OtlpShapeError(`${what} must be an unsigned 64-bit count of nanoseconds`);
}

function integer(value: unknown, what: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && /^-?\d{1,20}$/.test(value)) return Number(value);
  throw new OtlpShapeError(`${what} must be an integer`);
}

/**
 * Text as every database stores it (lib/domain/json.ts textProblem): a NUL or half a surrogate
 * pair (an SDK that cut an attribute inside an emoji) becomes U+FFFD, as protobuf's UTF-8
 * decoding already does, so that both encodings give the same record and the span is kept.
 */
const UNSTORABLE = /[\p{Cs}\u0000]/gu;
function text(value: unknown, what: string): string {
  if (value === undefined || value === null) return "";
  if (typeof value !== "string") throw new OtlpShapeError(`${what} must be text`);
  return value.replace(UNSTORABLE, "\uFFFD");
}

function list(value: unknown, what: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new OtlpShapeError(`${what} must be a list`);
  return value;
}

function object(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw new OtlpShapeError(`${what} must be an object`);
  return value as Record<string, unknown>;
}

/**
 * An AnyValue as JSON. Iterative over arrays and key-value lists would be tidier, but nesting is
 * capped at MAX_ATTRIBUTE_DEPTH, so plain recursion stays shallow.
 */
function anyValue(value: unknown, depth: number, what: string): AttrValue {
  if (depth > MAX_ATTRIBUTE_DEPTH) throw new OtlpShapeError(`${what}: attribute values nest deeper than ${MAX_ATTRIBUTE_DEPTH} levels`);
  const v = object(value, what);
  if (v.stringValue !== undefined && v.stringValue !== null) return text(v.stringValue, what);
  if (v.boolValue !== undefined && v.boolValue !== null) {
    if (typeof v.boolValue !== "boolean") throw new OtlpShapeError(`${what}: boolValue must be true or false`);
    return v.boolValue;
  }
  if (v.intValue !== undefined && v.intValue !== null) {
    const n = integer(v.intValue, what);
    return Number.isSafeInteger(n) ? n : String(v.intValue);
  }
  if (v.doubleValue !== undefined && v.doubleValue !== null) {
    const n = typeof v.doubleValue === "string" ? Number(v.doubleValue) : v.doubleValue;
    if (typeof n !== "number") throw new OtlpShapeError(`${what}: doubleValue must be a number`);
    // JSON cannot hold NaN or Infinity (SDKs can send both): kept as text.
    return Number.isFinite(n) ? n : String(n);
  }
  if (v.arrayValue !== undefined && v.arrayValue !== null) {
    return list(object(v.arrayValue, what).values, what).map((x) => anyValue(x, depth + 1, what));
  }
  if (v.kvlistValue !== undefined && v.kvlistValue !== null) {
    return keyValues(list(object(v.kvlistValue, what).values, what), depth + 1, what);
  }
  if (v.bytesValue !== undefined && v.bytesValue !== null) {
    if (typeof v.bytesValue === "string") return v.bytesValue; // OTLP JSON: already base64
    if (v.bytesValue instanceof Uint8Array) return Buffer.from(v.bytesValue).toString("base64");
    throw new OtlpShapeError(`${what}: bytesValue must be base64 text or bytes`);
  }
  return null;
}

/** Key-value pairs as an object; a repeated key keeps its last value; `__proto__` is dropped (no record may carry it). */
function keyValues(pairs: unknown[], depth: number, what: string): Attributes {
  const entries: [string, AttrValue][] = [];
  for (const p of pairs) {
    const kv = object(p, what);
    const key = text(kv.key, `${what}: an attribute key`);
    const value = anyValue(kv.value, depth, `${what} ${JSON.stringify(key.slice(0, 100))}`);
    if (key !== "__proto__") entries.push([key, value]);
  }
  return Object.fromEntries(entries);
}

export function attributes(pairs: unknown, what: string): Attributes {
  return keyValues(list(pairs, what), 0, what);
}

/** Every span of a decoded ExportTraceServiceRequest, in order. */
export function spansOf(request: unknown): Span[] {
  return [...eachSpan(request)];
}

/** The spans one at a time, so that a caller can let others in between (16 MiB is seconds of work). */
export function* eachSpan(request: unknown): Generator<Span> {
  const req = object(request, "the request");
  for (const [r, rsRaw] of list(req.resourceSpans, "resourceSpans").entries()) {
    const rs = object(rsRaw, `resourceSpans[${r}]`);
    const resource = attributes(object(rs.resource, `resourceSpans[${r}].resource`).attributes, `resourceSpans[${r}].resource.attributes`);
    for (const [s, ssRaw] of list(rs.scopeSpans, `resourceSpans[${r}].scopeSpans`).entries()) {
      const ss = object(ssRaw, `resourceSpans[${r}].scopeSpans[${s}]`);
      const scopeRaw = object(ss.scope, "scope");
      const scope = { name: text(scopeRaw.name, "scope.name"), version: text(scopeRaw.version, "scope.version") };
      for (const [i, spanRaw] of list(ss.spans, `resourceSpans[${r}].scopeSpans[${s}].spans`).entries()) {
        const at = `resourceSpans[${r}].scopeSpans[${s}].spans[${i}]`;
        const span = object(spanRaw, at);
        const status = object(span.status, `${at}.status`);
        yield {
          traceId: id(span.traceId, 16, `${at}.traceId`, true)!,
          spanId: id(span.spanId, 8, `${at}.spanId`, true)!,
          parentSpanId: id(span.parentSpanId, 8, `${at}.parentSpanId`, false),
          name: text(span.name, `${at}.name`),
          kind: integer(span.kind, `${at}.kind`),
          startNs: nanos(span.startTimeUnixNano, `${at}.startTimeUnixNano`),
          endNs: nanos(span.endTimeUnixNano, `${at}.endTimeUnixNano`),
          status: { code: integer(status.code, `${at}.status.code`), message: text(status.message, `${at}.status.message`) },
          attributes: attributes(span.attributes, `${at}.attributes`),
          resource,
          scope,
        };
      }
    }
  }
}

/** Nanoseconds since the epoch as an RFC 3339 instant (millisecond precision), or null when unset or out of range. */
export function instantOf(ns: bigint): string | null {
  if (ns <= 0n) return null;
  const ms = Number(ns / 1_000_000n);
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}
