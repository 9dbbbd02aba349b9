import protoRoot from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { OtlpShapeError } from "./spans";

/**
 * The OTLP wire formats through OpenTelemetry's own definitions: the protobuf types generated
 * from opentelemetry-proto by the OpenTelemetry JS project (`@opentelemetry/otlp-transformer`,
 * pinned to 0.215, the last line that ships them; decoding and encoding are protobufjs's).
 * Nothing here reads protobuf bytes by hand.
 */

type Message = {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: { longs: StringConstructor; defaults: boolean }): unknown;
  fromObject(object: unknown): unknown;
  encode(message: unknown): { finish(): Uint8Array };
};

const v1 = (protoRoot as unknown as { opentelemetry: { proto: { collector: { trace: { v1: Record<string, Message> } } } } }).opentelemetry.proto.collector.trace.v1;
const Request = v1.ExportTraceServiceRequest;
const Response = v1.ExportTraceServiceResponse;

export type Encoding = "protobuf" | "json";

/** The request's encoding from its Content-Type, or null when it is neither OTLP encoding. */
export function encodingOf(contentType: string | null): Encoding | null {
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase();
  if (type === "application/x-protobuf" || type === "application/protobuf") return "protobuf";
  if (type === "application/json") return "json";
  return null;
}

/**
 * An ExportTraceServiceRequest as a plain object (ids as bytes or hex text, 64-bit integers as
 * text): what `spansOf` reads. A body that is not the message is an OtlpShapeError.
 */
export function decodeRequest(body: Uint8Array, encoding: Encoding): unknown {
  if (encoding === "json") {
    try {
      return JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
    } catch (e) {
      throw new OtlpShapeError(`the body is not OTLP JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  try {
    return Request.toObject(Request.decode(body), { longs: String, defaults: false });
  } catch (e) {
    // Truncated or malformed protobuf, and also stack-deep nesting (a RangeError, in decoding or
    // in toObject: thousands of levels decode, then overflow the stack when converted).
    throw new OtlpShapeError(`the body is not an OTLP ExportTraceServiceRequest in protobuf: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** ExportTraceServiceResponse in the request's encoding: empty when every span was taken, else partialSuccess. */
export function encodeResponse(encoding: Encoding, rejectedSpans: number, errorMessage: string): { body: Uint8Array | string; contentType: string } {
  const partial = rejectedSpans > 0 || errorMessage ? { partialSuccess: { rejectedSpans: String(rejectedSpans), errorMessage } } : {};
  if (encoding === "json") return { body: JSON.stringify(partial), contentType: "application/json" };
  return { body: Response.encode(Response.fromObject(partial)).finish(), contentType: "application/x-protobuf" };
}

/**
 * For tests and benchmarks: a request in OTLP JSON's shape (hex ids) as protobuf bytes, through
 * the same definitions. protobufjs's fromObject reads bytes fields from base64 text, so the hex
 * ids become bytes first.
 */
export function encodeJsonRequest(request: { resourceSpans?: { scopeSpans?: { spans?: Record<string, unknown>[] }[] }[] }): Uint8Array {
  const bytes = (hex: unknown) => (typeof hex === "string" ? Buffer.from(hex, "hex") : hex);
  const copy = {
    ...request,
    resourceSpans: (request.resourceSpans ?? []).map((rs) => ({
      ...rs,
      scopeSpans: (rs.scopeSpans ?? []).map((ss) => ({
        ...ss,
        spans: (ss.spans ?? []).map((span) => ({ ...span, traceId: bytes(span.traceId), spanId: bytes(span.spanId), parentSpanId: bytes(span.parentSpanId) })),
      })),
    })),
  };
  return Request.encode(Request.fromObject(copy)).finish();
}
