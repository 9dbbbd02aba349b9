import "server-only";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import type { Principal } from "@/lib/domain/permissions";
import { decodeRequest, encodeResponse, encodingOf } from "@/lib/otlp/decode";
import { eachSpan, OtlpShapeError, type Span } from "@/lib/otlp/spans";
import { cut } from "@/lib/domain/json";
import { eachRecord, type SpanRecord } from "@/lib/otlp/tool-spans";
import { MAX_VALUES, precheck } from "@/lib/otlp/precheck";
import { MAX_LINKED_TRACES, TraceLinks } from "@/lib/otlp/trace-links";
import { recordTraceLinks } from "@/lib/store/ingest/trace-links";
import { ingestPacer } from "@/lib/store/db/pace";
import { ingestTurn } from "@/lib/store/db/priority";
import { MiB, readBodyBytes, tooLarge } from "./body";
import { ApiError } from "./errors";
import { ingestList, MAX_BATCH, senderOf } from "./ingest";

/**
 * POST /api/v1/otlp/v1/traces: OTLP/HTTP trace export (docs/INTEGRATIONS.md). Each tool span
 * becomes an ordinary record through the ingest path (same checks, chain, idempotency, trust
 * rules); other spans are ignored. The answer is OTLP's own: an ExportTraceServiceResponse in
 * the request's encoding, with the spans that could not be stored counted in partialSuccess.
 * Refusals of the whole request are the API's JSON errors with OTLP's status codes: 400 for a
 * body that does not decode, 413 over 16 MiB, 415 for another encoding, 429 with Retry-After
 * under backpressure (the only ones, with 503, that exporters retry).
 */
export const MAX_OTLP_BYTES = 16 * MiB;
/**
 * Tool spans stored from one request, at most (SDK exporters send 512 spans a batch). The rest are
 * counted in partialSuccess, not stored: a 16 MiB request can hold 400,000 minimal tool spans,
 * minutes of writes for one request.
 */
export const MAX_TOOL_SPANS = 10_000;
/** Error messages quoted in partialSuccess.errorMessage (the count covers them all). */
const QUOTED_ERRORS = 5;

const gunzipAsync = promisify(gunzip);

async function inflate(body: Buffer): Promise<Buffer> {
  try {
    return await gunzipAsync(body, { maxOutputLength: MAX_OTLP_BYTES });
  } catch (e) {
    if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw tooLarge(MAX_OTLP_BYTES);
    throw new ApiError("bad_request", `the body is not valid gzip: ${(e as Error).message}`);
  }
}

export async function ingestOtlp(req: Request, principal: Principal): Promise<Response> {
  const type = req.headers.get("content-type");
  const encoding = encodingOf(type);
  if (!encoding) {
    throw new ApiError("unsupported_media_type", "send OTLP traces as application/x-protobuf or application/json", { content_type: type?.split(";")[0].trim() || null });
  }
  const contentEncoding = (req.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (contentEncoding !== "identity" && contentEncoding !== "gzip") {
    throw new ApiError("unsupported_media_type", `Content-Encoding ${contentEncoding} is not taken: send gzip, or no encoding`, { content_encoding: contentEncoding });
  }
  let body = await readBodyBytes(req, MAX_OTLP_BYTES);
  if (contentEncoding === "gzip") body = await inflate(body);
  const check = await precheck(body, encoding);
  if (!check.ok) throw new ApiError("too_large", `${check.reason}: send it in smaller requests`, { max_values: MAX_VALUES });

  // Decoding is one step (protobufjs decodes the message whole: ~0.6 s for 16 MiB here); reading
  // the spans and making records goes in slices, letting other requests in between.
  // Not begun while a person waits for a page (lib/store/db/priority.ts).
  await ingestTurn();
  const pace = ingestPacer();
  const spans: Span[] = [];
  const mapped: SpanRecord[] = [];
  const links = new TraceLinks();
  try {
    for (const span of eachSpan(decodeRequest(body, encoding))) {
      spans.push(span);
      links.add(span);
      await pace();
    }
  } catch (e) {
    if (e instanceof OtlpShapeError) throw new ApiError("bad_request", e.message);
    throw e;
  }
  let overCap = 0;
  for (const m of eachRecord(spans)) {
    if (mapped.length < MAX_TOOL_SPANS) mapped.push(m);
    else overCap++;
    await pace();
  }

  // What the spans say of their traces first: this request's tool spans whose ancestors were
  // sent earlier take the conversation as they are stored, and earlier ones are linked now.
  const sender = senderOf(principal);
  // A link sets operations' trajectory and agent, envelope fields: only a sender that may ingest
  // (TRUST.md; a verify-only token may send canonical reads, which name neither).
  if (sender.rights.mayIngest) await recordTraceLinks(links.links, sender.rights.userId);
  let rejected = 0;
  const quoted: string[] = [];
  // In batches the size of the receipts endpoint's, one after another: no transaction grows
  // with the request, and others' requests get their turn in between.
  for (let i = 0; i < mapped.length; i += MAX_BATCH) {
    const chunk = mapped.slice(i, i + MAX_BATCH);
    const results = await ingestList(
      chunk.map((m) => m.record),
      sender,
      true,
    );
    for (const r of results) {
      if (!("error" in r)) continue;
      rejected++;
      if (quoted.length < QUOTED_ERRORS) {
        const { span, record } = chunk[r.index];
        quoted.push(`span ${span.spanId} (operation ${cut(String(record.operation_id), 200)}): ${r.error.code}: ${r.error.message}`);
      }
    }
  }
  if (overCap) {
    rejected += overCap;
    quoted.unshift(`${overCap} tool span${overCap === 1 ? "" : "s"} past the first ${MAX_TOOL_SPANS.toLocaleString("en")} of the request: send them in another request`);
  }
  const notStored = rejected ? `${rejected} tool span${rejected === 1 ? "" : "s"} not stored: ${quoted.join("; ")}${rejected > quoted.length ? "; …" : ""}` : "";
  // A warning with the spans counted as stored (OTLP allows errorMessage with rejectedSpans 0): their records were kept, not their traces' links.
  const unlinked = links.overCap
    ? `${links.overCap} span${links.overCap === 1 ? "" : "s"} naming the conversation or agent of a trace past the first ${MAX_LINKED_TRACES.toLocaleString("en")} of the request: not kept for their traces, send them in another request`
    : "";
  const message = [notStored, unlinked].filter(Boolean).join("; ");
  const answer = encodeResponse(encoding, rejected, message);
  return new Response(answer.body as BodyInit, { status: 200, headers: { "content-type": answer.contentType } });
}
