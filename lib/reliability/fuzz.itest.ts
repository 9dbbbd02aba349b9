/**
 * Bad input (issue 7, item 3): fast-check throws random, malformed and hostile requests at the real
 * production server — the ingest endpoint, the corrections endpoint, and the query parameters of
 * the operation list and the audit export — and holds every answer against three promises:
 *
 * 1. never a 5xx, never a dropped connection, and the server is healthy afterwards;
 * 2. a refusal is a 4xx with the documented error shape `{"error": {"code", "message", …}}`, and
 *    what is refused or accepted agrees with a small model of docs/API.md (the wire schema and
 *    JSON-shape rules of lib/domain decide a record's validity; the HTTP rules — content type,
 *    size limits, UTF-8, JSON, duplicate keys, batches — are written out here);
 * 3. nothing is stored from a refused request: every chain record appended while a case ran
 *    belongs to an operation some answer accepted (or is the one correction / export event a
 *    201 / 200 announced), the operations created are exactly those answered 201, and an
 *    accepted record stored exactly its stage records.
 *
 * A case is one fuzzed request. fast-check runs send a few cases at once (2 for ingest and
 * corrections, 4 for list queries), ingest runs often with a valid "companion" record beside
 * them: a bad request must not take a good one down with it (ingest commits concurrent requests
 * together). Every request gets fresh operation ids (this file's prefix and a request number), so
 * a re-run while shrinking starts from a clean slate.
 *
 * RELIABILITY_FUZZ_RUNS (default 1000) is the number of cases per endpoint family: ingest,
 * corrections (bodies, path ids, duplicate keys), list query parameters, export query parameters;
 * each family's classes share it as the tests below say. The soak sets 10000.
 * RELIABILITY_FUZZ_SEED replays a run (fast-check prints the seed and path of a failure).
 */
import fc from "fast-check";
import { Agent, request } from "node:http";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AUDIT_FORMATS, CONTENT_TYPES, type AuditFormat } from "@/lib/domain/audit-format";
import { correctionRequestSchema } from "@/lib/domain/corrections";
import { canonicalJson } from "@/lib/domain/hash";
import { checkJsonShape, isPlainObject } from "@/lib/domain/json";
import { METRIC_NAMES, METRIC_PARTS } from "@/lib/domain/metrics";
import { EFFECTIVE_OUTCOMES, OUTCOMES } from "@/lib/domain/outcomes";
import { normalizeInstant } from "@/lib/domain/time";
import { DEFAULT_MAX_CLOCK_SKEW_SECONDS, futureRefusal } from "@/lib/domain/trust";
import { operationRecordSchema, readStatuses, receiptStatuses, sideEffectStatuses } from "@/lib/domain/wire";
import { baseUrl, db, principal, unique } from "@/lib/testing/integration";

// ---------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------

const RUNS = (() => {
  const raw = process.env.RELIABILITY_FUZZ_RUNS ?? "1000";
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`RELIABILITY_FUZZ_RUNS must be a positive integer, not ${raw}`);
  return n;
})();
const SEED = process.env.RELIABILITY_FUZZ_SEED ? Number(process.env.RELIABILITY_FUZZ_SEED) : undefined;
/** This share of a family's cases. */
const share = (fraction: number) => Math.max(1, Math.round(RUNS * fraction));
/** Per-test time limit: generous, so that a failure has time to shrink to a small example. */
const TIME_LIMIT = 180_000 + RUNS * 250;
/**
 * fast-check's options. A run that outlasts the time limit fails (it never passes with fewer
 * cases); a failure still shrinking then is reported as far as it got, before vitest's timeout.
 */
const fcOptions = (numRuns: number): fc.Parameters<unknown> => ({
  numRuns,
  seed: SEED,
  interruptAfterTimeLimit: TIME_LIMIT - 30_000,
  markInterruptAsFailure: true,
});

const MiB = 1024 * 1024;
// docs/API.md: 1 MiB per record, 4 MiB per request, 500 records per batch, 64 levels of nesting.
const MAX_REQUEST_BYTES = 4 * MiB;
const MAX_RECORD_BYTES = MiB;
const MAX_BATCH = 500;
// The corrections endpoint: a 64 KiB body, 8 levels.
const MAX_CORRECTION_BYTES = 64 * 1024;
const MAX_CORRECTION_DEPTH = 8;
/** Node's HTTP parser answers 431 itself above its 16 KiB header limit, before the app sees it. */
const NODE_MAX_HEADER_BYTES = 16 * 1024;

const RUN = unique("fz");
let caseCounter = 0;
const nextCasePrefix = () => `${RUN}-${++caseCounter}-`;

function assertOrThrow(condition: unknown, message: () => string): asserts condition {
  if (!condition) throw new Error(message());
}

// ---------------------------------------------------------------------------------------------
// Request bodies: parts rendered to bytes at run time, so that ids are fresh on every run.
// ---------------------------------------------------------------------------------------------

/** Text (with @@ID<n>@@ and other placeholders substituted), raw bytes, a repeated text, or UTF-16. */
type Part = string | { bytes: number[] } | { repeat: string; times: number } | { utf16le: string };

function render(parts: Part[], substitute: (text: string) => string): Uint8Array {
  return Buffer.concat(
    parts.map((p) => {
      if (typeof p === "string") return Buffer.from(substitute(p), "utf8");
      if ("bytes" in p) return Buffer.from(p.bytes);
      if ("utf16le" in p) return Buffer.from(substitute(p.utf16le), "utf16le");
      return Buffer.from(p.repeat.repeat(p.times), "utf8");
    }),
  );
}

const idToken = (n: number) => `@@ID${n}@@`;
const substituteIds = (prefix: string) => (text: string) => text.replace(/@@ID(\d+)@@/g, (_, n: string) => `${prefix}${n}`);

/** A text with placeholder keys / values swapped for raw JSON text (which JS objects cannot hold). */
function swapRaw(text: string, swaps: Record<string, string>): string {
  let out = text;
  for (const [placeholder, raw] of Object.entries(swaps)) out = out.split(placeholder).join(raw);
  return out;
}

function preview(bytes: Uint8Array): string {
  const head = Buffer.from(bytes.subarray(0, 400)).toString("utf8");
  return `${JSON.stringify(head)}${bytes.length > 400 ? `… (${bytes.length} bytes)` : ""}`;
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

type Reply = { status: number; text: string; json: any; contentType: string | null; failure?: string };

function chunked(bytes: Uint8Array, size = 64 * 1024): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + size));
      offset += size;
    },
  });
}

function parseReply(status: number, text: string, contentType: string | null): Reply {
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status, text, json, contentType };
}

const failed = (e: unknown): Reply => {
  const cause = (e as { cause?: unknown }).cause;
  return { status: -1, text: "", json: null, contentType: null, failure: `${(e as Error).message}${cause ? ` (${String(cause)})` : ""}` };
};

/** Keep-alive sockets for node:http: a fraction of fetch's CPU per request, which adds up over thousands. */
const agent = new Agent({ keepAlive: true, maxSockets: 16 });

/**
 * One request; the answer is read to its last byte (an export is consumed whole). Small bodies go
 * through node:http; bodies over 1 MiB and streamed ones through fetch. An over-limit upload must
 * still be answered (the server reads and drops it before its 413), so a reset here is a failure.
 */
async function http(
  method: "GET" | "POST",
  path: string,
  opts: { token: string; body?: Uint8Array; contentType?: string | null; stream?: boolean },
): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${opts.token}` };
  if (opts.contentType !== undefined && opts.contentType !== null) headers["content-type"] = opts.contentType;
  if (opts.stream || (opts.body && opts.body.length > MiB)) {
    const init: RequestInit & { duplex?: "half" } = { method, headers };
    if (opts.stream && opts.body) {
      init.body = chunked(opts.body);
      init.duplex = "half";
    } else {
      init.body = opts.body as unknown as BodyInit;
    }
    try {
      const res = await fetch(baseUrl + path, init);
      return parseReply(res.status, await res.text(), res.headers.get("content-type"));
    } catch (e) {
      return failed(e);
    }
  }
  const { hostname, port } = new URL(baseUrl);
  if (opts.body) headers["content-length"] = String(opts.body.length);
  return new Promise<Reply>((resolve) => {
    const req = request({ host: hostname, port, method, path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve(parseReply(res.statusCode ?? -1, Buffer.concat(chunks).toString("utf8"), res.headers["content-type"] ?? null)));
      res.on("error", (e) => resolve(failed(e)));
    });
    req.on("error", (e) => resolve(failed(e)));
    req.end(opts.body ? Buffer.from(opts.body) : undefined);
  });
}

function describeExchange(method: string, path: string, contentType: string | null | undefined, body: Uint8Array | undefined, reply: Reply): string {
  const req = `${method} ${path.length > 300 ? path.slice(0, 300) + "…" : path}${contentType !== undefined ? ` [content-type: ${JSON.stringify(contentType)}]` : ""}${body ? ` body ${preview(body)}` : ""}`;
  const res = reply.failure ? `no answer: ${reply.failure}` : `${reply.status} ${reply.text.length > 600 ? reply.text.slice(0, 600) + "…" : reply.text}`;
  return `${req}\n  → ${res}`;
}

/** Never a 5xx, never a dropped connection; a 4xx carries the documented error body. */
function checkNoServerError(reply: Reply, context: () => string) {
  assertOrThrow(reply.status !== -1, () => `the request got no answer (a crash or a dropped connection)\n${context()}`);
  assertOrThrow(reply.status < 500, () => `a ${reply.status}: a 5xx is a bug\n${context()}`);
  assertOrThrow(reply.status >= 200, () => `an unexpected status ${reply.status}\n${context()}`);
  if (reply.status >= 400) checkErrorBody(reply.json, context);
}

function checkErrorBody(body: any, context: () => string) {
  assertOrThrow(
    isPlainObject(body) &&
      isPlainObject(body.error) &&
      typeof body.error.code === "string" &&
      /^[a-z_]+$/.test(body.error.code) &&
      typeof body.error.message === "string" &&
      body.error.message.trim().length > 0,
    () => `a refusal without the documented {"error": {"code", "message"}} body\n${context()}`,
  );
}

async function expectHealthy() {
  const res = await fetch(`${baseUrl}/api/health`);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ status: "ok" });
}

// ---------------------------------------------------------------------------------------------
// The database: what a case appended to the chain
// ---------------------------------------------------------------------------------------------

async function headSeq(): Promise<number> {
  const head = await (await db()).chainRecord.findFirst({ orderBy: { seq: "desc" }, select: { seq: true } });
  return head?.seq ?? 0;
}

type Appended = { seq: number; kind: string; operationId: string | null; payload: string };

/**
 * The chain's last seq as this file last saw it. Only this file writes while it runs (the
 * integration files run one at a time), so each run reads just what was appended since the
 * previous one — anything written late would still show up, in the next run's check. Raw SQL:
 * the same text on SQLite and PostgreSQL, and a fraction of the query builder's CPU per run.
 */
let seenSeq = 0;

async function lookAtHead(): Promise<number> {
  seenSeq = await headSeq();
  return seenSeq;
}

/** Chain records appended since the last look (and moves the look forward). */
async function appendedSinceLastLook(): Promise<Appended[]> {
  const reader = await db();
  const rows = await reader.$queryRaw<{ seq: number | bigint; kind: string; operation_id: string | null; payload: string }[]>`
    SELECT seq, kind, operation_id, payload FROM chain_records WHERE seq > ${seenSeq} ORDER BY seq`;
  const out = rows.map((r) => ({ seq: Number(r.seq), kind: r.kind, operationId: r.operation_id, payload: r.payload }));
  if (out.length) seenSeq = out[out.length - 1].seq;
  return out;
}

/**
 * A property's predicate. When a run fails, what it stored is looked at no more (fast-check goes
 * on to shrink, and the next run must not be blamed for this one's records), and `resync`
 * re-reads any state the runs keep (the corrections pool).
 */
function guarded<T>(body: (value: T) => Promise<void>, resync?: () => Promise<void>): (value: T) => Promise<void> {
  return async (value) => {
    try {
      await body(value);
    } catch (e) {
      await lookAtHead();
      await resync?.();
      throw e;
    }
  };
}

async function operationsCreatedAfter(seq: number): Promise<string[]> {
  const reader = await db();
  const rows = await reader.$queryRaw<{ operation_id: string }[]>`SELECT operation_id FROM operations WHERE created_seq > ${seq}`;
  return rows.map((r) => r.operation_id);
}

// ---------------------------------------------------------------------------------------------
// JSON helpers for the model
// ---------------------------------------------------------------------------------------------

/**
 * The first object key repeated within one object, in document order, with its path
 * ("receipt.status", "records[1].operation_id", "[0].a"). The text must be valid JSON. Paths are
 * built only for the duplicate found: a 100,000-deep document must not cost 100,000² characters.
 */
function findDuplicateKeyPath(text: string): { key: string; path: string } | null {
  type Frame = { parent: Frame | null; at: string | number | null; keys: Set<string> | null; index: number; key: string | null };
  const pathOf = (frame: Frame, last: string): string => {
    const steps: (string | number)[] = [last];
    for (let f: Frame | null = frame; f && f.at !== null; f = f.parent) steps.unshift(f.at);
    return steps.reduce<string>((path, s) => (typeof s === "number" ? `${path}[${s}]` : path ? `${path}.${s}` : s), "");
  };
  let top = null as Frame | null;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (expectKey && top) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys!.has(key)) return { key, path: pathOf(top, key) };
        top.keys!.add(key);
        top.key = key;
        expectKey = false;
      }
      i = j;
    } else if (c === "{" || c === "[") {
      const at: string | number | null = top ? (top.keys ? top.key : top.index) : null;
      top = { parent: top, at, keys: c === "{" ? new Set() : null, index: 0, key: null };
      expectKey = c === "{";
    } else if (c === "}" || c === "]") {
      top = top?.parent ?? null;
      expectKey = false;
    } else if (c === "," && top) {
      if (top.keys) expectKey = true;
      else top.index++;
    }
  }
  return null;
}

const LONE_SURROGATE = /\p{Surrogate}/u;

/** Values the canonical JSON of the hash chain cannot represent: lone surrogates, ±Infinity. */
function hasUnrepresentable(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string" && LONE_SURROGATE.test(v)) return true;
    if (typeof v === "number" && !Number.isFinite(v)) return true;
    if (Array.isArray(v)) stack.push(...v);
    else if (v !== null && typeof v === "object") {
      for (const [k, child] of Object.entries(v)) {
        if (LONE_SURROGATE.test(k)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

/** How many stage records a fresh operation gets from this (valid) record (DOMAIN.md "Stage records"). */
function stageRecordCount(record: Record<string, unknown>): number | null {
  let n = 0;
  if (record.intent !== undefined) n++;
  if (record.receipt !== undefined) n++;
  if (record.canonical_read !== undefined) {
    const reads = Array.isArray(record.canonical_read) ? record.canonical_read : [record.canonical_read];
    try {
      n += new Set(reads.map((r) => canonicalJson(r))).size; // an identical read is stored once
    } catch {
      return null;
    }
  }
  if (record.side_effects !== undefined) n++;
  return n;
}

function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0].trim().toLowerCase();
}

/** The HTTP-level rules every JSON endpoint shares: content type, size, UTF-8, JSON, duplicate keys. */
function modelJsonBody(
  bytes: Uint8Array,
  contentType: string | null,
  maxBytes: number,
): { refused: { status: number; code: string; duplicate?: { key: string; path: string } } } | { body: unknown; text: string } {
  if (mediaType(contentType) !== "application/json") return { refused: { status: 415, code: "unsupported_media_type" } };
  if (bytes.length > maxBytes) return { refused: { status: 413, code: "too_large" } };
  if (bytes.length === 0) return { refused: { status: 400, code: "malformed_json" } };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { refused: { status: 400, code: "malformed_json" } };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { refused: { status: 400, code: "malformed_json" } };
  }
  const duplicate = findDuplicateKeyPath(text);
  if (duplicate) return { refused: { status: 400, code: "malformed_json", duplicate } };
  return { body, text };
}

function checkDuplicateKeyRefusal(reply: Reply, duplicate: { key: string; path: string }, context: () => string) {
  assertOrThrow(
    reply.status === 400 && reply.json?.error?.code === "malformed_json",
    () => `a body with the duplicate key ${JSON.stringify(duplicate.path)} must be refused with 400 malformed_json\n${context()}`,
  );
  assertOrThrow(
    String(reply.json.error.message).includes(duplicate.path),
    () => `the refusal of a duplicate key must name its path ${JSON.stringify(duplicate.path)}\n${context()}`,
  );
}

// ---------------------------------------------------------------------------------------------
// The ingest model
// ---------------------------------------------------------------------------------------------

type ItemModel = {
  verdict: "accept" | "refuse" | "any";
  /** Allowed statuses (for "any": every status below 500). */
  statuses: number[];
  code?: string;
  id?: string;
  record?: Record<string, unknown>;
  /** The id occurs once in this request (exact stage counts are checked only then). */
  alone: boolean;
};

type IngestModel =
  | { kind: "refused"; status: number; code: string; duplicate?: { key: string; path: string } }
  | { kind: "single"; item: ItemModel }
  | { kind: "batch"; items: ItemModel[] };

function recordVerdict(raw: unknown, mayBeLarge: boolean): { verdict: "accept" | "any" } | { verdict: "refuse"; status: number; code: string } {
  if (checkJsonShape(raw)) return { verdict: "refuse", status: 422, code: "invalid_record" };
  if (!isPlainObject(raw)) return { verdict: "refuse", status: 422, code: "invalid_record" };
  if (mayBeLarge && Buffer.byteLength(JSON.stringify(raw)) > MAX_RECORD_BYTES) return { verdict: "refuse", status: 413, code: "too_large" };
  if (!operationRecordSchema.safeParse(raw).success) return { verdict: "refuse", status: 422, code: "invalid_record" };
  // A valid timestamp can still lie past the server's clock ("9999-12-31T23:59:59.999999999-23:59",
  // a bad-timestamp mutation that parses): TRUST.md refuses such an observation.
  if (futureRefusal(raw, Date.now(), DEFAULT_MAX_CLOCK_SKEW_SECONDS)) return { verdict: "refuse", status: 422, code: "observed_in_future" };
  // Lone surrogates and ±Infinity cannot be hashed as they are: storing or refusing them are both
  // fine, as long as it is one or the other (and never a 5xx).
  if (hasUnrepresentable(raw)) return { verdict: "any" };
  return { verdict: "accept" };
}

function modelIngest(bytes: Uint8Array, contentType: string | null, prefix: string): IngestModel {
  const parsed = modelJsonBody(bytes, contentType, MAX_REQUEST_BYTES);
  if ("refused" in parsed) return { kind: "refused", ...parsed.refused };
  const body = parsed.body;
  const mayBeLarge = bytes.length > MAX_RECORD_BYTES;
  const ids = new Map<string, number>();
  const seen = new Set<string>();
  const item = (raw: unknown): ItemModel => {
    const v = recordVerdict(raw, mayBeLarge);
    if (v.verdict === "refuse") return { verdict: "refuse", statuses: [v.status], code: v.code, alone: false };
    const record = raw as Record<string, unknown>;
    const id = record.operation_id as string;
    const fresh = id.startsWith(prefix) && !seen.has(id);
    seen.add(id);
    if (v.verdict === "any") return { verdict: "any", statuses: [], id, record, alone: false };
    return { verdict: "accept", statuses: fresh ? [201] : [200, 201, 409], id, record, alone: false };
  };
  const countIds = (items: unknown[]) => {
    for (const raw of items) {
      if (isPlainObject(raw) && typeof raw.operation_id === "string") ids.set(raw.operation_id, (ids.get(raw.operation_id) ?? 0) + 1);
    }
  };
  if (isPlainObject(body) && "records" in body && !("operation_id" in body)) {
    const records = body.records;
    if (!Array.isArray(records)) return { kind: "refused", status: 422, code: "invalid_request" };
    if (records.length > MAX_BATCH) return { kind: "refused", status: 413, code: "too_large" };
    if (!records.length) return { kind: "refused", status: 422, code: "invalid_request" };
    countIds(records);
    const items = records.map(item);
    for (const it of items) it.alone = it.id !== undefined && ids.get(it.id) === 1;
    return { kind: "batch", items };
  }
  countIds([body]);
  const single = item(body);
  if (single.verdict === "refuse") return { kind: "refused", status: single.statuses[0], code: single.code! };
  single.alone = true;
  return { kind: "single", item: single };
}

type Accepted = { id: string; status: number; duplicate: boolean; record?: Record<string, unknown>; alone: boolean };

function checkAcceptedBody(body: any, context: () => string) {
  assertOrThrow(
    isPlainObject(body) &&
      typeof body.operation_id === "string" &&
      typeof body.outcome === "string" &&
      typeof body.reason === "string" &&
      Array.isArray(body.observed_side_effects) &&
      isPlainObject(body.retry) &&
      typeof body.duplicate === "boolean",
    () => `an accepted record without its derived state\n${context()}`,
  );
}

/** Holds one ingest answer against the model; returns what it accepted. */
function judgeIngest(model: IngestModel, reply: Reply, context: () => string): Accepted[] {
  checkNoServerError(reply, context);
  const accepted: Accepted[] = [];
  if (model.kind === "refused") {
    if (model.duplicate) checkDuplicateKeyRefusal(reply, model.duplicate, context);
    assertOrThrow(
      reply.status === model.status && reply.json.error.code === model.code,
      () => `expected ${model.status} ${model.code}\n${context()}`,
    );
    return accepted;
  }
  const judgeItem = (item: ItemModel, status: number, body: any, where: string) => {
    if (item.verdict === "any") {
      assertOrThrow(status < 500, () => `${where}: a ${status}\n${context()}`);
    } else {
      assertOrThrow(item.statuses.includes(status), () => `${where}: expected ${item.statuses.join(" or ")}, got ${status}\n${context()}`);
    }
    if (status === 200 || status === 201) {
      checkAcceptedBody(body, context);
      assertOrThrow(body.operation_id === item.id, () => `${where}: answered for ${JSON.stringify(body.operation_id)}, sent ${JSON.stringify(item.id)}\n${context()}`);
      if (status === 201) assertOrThrow(body.duplicate === false, () => `${where}: a new operation cannot be a duplicate\n${context()}`);
      accepted.push({ id: item.id!, status, duplicate: body.duplicate, record: item.record, alone: item.alone });
    } else {
      checkErrorBody(body, context);
      if (item.verdict === "refuse" && item.code) {
        assertOrThrow(body.error.code === item.code, () => `${where}: expected the error ${item.code}\n${context()}`);
      }
    }
  };
  if (model.kind === "single") {
    judgeItem(model.item, reply.status, reply.json, "the record");
    return accepted;
  }
  const results = reply.json?.results;
  assertOrThrow(
    (reply.status === 200 || reply.status === 207) && Array.isArray(results) && results.length === model.items.length,
    () => `a batch of ${model.items.length} must answer 200/207 with one result per record\n${context()}`,
  );
  results.forEach((r: any, i: number) => {
    assertOrThrow(isPlainObject(r) && r.index === i && typeof r.status === "number", () => `batch result ${i} has no index/status\n${context()}`);
    judgeItem(model.items[i], r.status, r.status < 300 ? r : { error: r.error }, `batch item ${i}`);
  });
  const allOk = results.every((r: any) => r.status < 300);
  assertOrThrow(reply.status === (allOk ? 200 : 207), () => `a batch answers 200 when every item succeeded, else 207\n${context()}`);
  return accepted;
}

// ---------------------------------------------------------------------------------------------
// Generators: values
// ---------------------------------------------------------------------------------------------

const safeText = (maxLength = 40) => fc.string({ unit: "grapheme", maxLength });
const weirdText = fc.oneof(
  safeText(),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.constantFrom("", " ", "\u0000", "\u202e", "\ufeff", "\u2028", "💥", "Ω≈ç√", "\\", '"', "<script>", "'; drop table x; --", "%s%n", "${x}", "\r\n", "ﬀ", "İ"),
);
/** Control characters: SQLite stores them, PostgreSQL refuses NUL in text — neither may become a 5xx. */
const controlText = fc.constantFrom("\u0000", "a\u0000b", "\u0001", "\u001b[31m", "\u007f", "\u0085");
/** Text for record and correction fields: mostly ordinary, sometimes odd. */
const fieldText = (maxLength = 40) =>
  fc.oneof({ arbitrary: safeText(maxLength), weight: 8 }, { arbitrary: weirdText, weight: 1 }, { arbitrary: controlText, weight: 1 });
const timestamp = fc
  .record({
    // Up to a minute ago: a later observation is refused (TRUST.md, 422 observed_in_future; ingest.itest.ts tests it).
    ms: fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.now() - 60_000 }),
    frac: fc.option(fc.stringMatching(/^[0-9]{1,9}$/), { nil: undefined }),
    t: fc.constantFrom("T", "t"),
    offsetMinutes: fc.constantFrom(0, 0, 330, -480, 60, -59),
    z: fc.constantFrom("Z", "z", "+00:00"),
  })
  .map(({ ms, frac, t, offsetMinutes, z }) => {
    const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19).replace("T", t);
    const sign = offsetMinutes < 0 ? "-" : "+";
    const abs = Math.abs(offsetMinutes);
    const zone = offsetMinutes === 0 ? z : `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
    return `${local}${frac ? `.${frac}` : ""}${zone}`;
  });
const badTimestamp = fc.constantFrom(
  "2026-02-30T00:00:00Z",
  "2026-08-28 10:00:00",
  "2026-08-28T24:00:00Z",
  "2026-08-28T10:00:00",
  "yesterday",
  "",
  "2026-13-01T00:00:00Z",
  "2026-08-28T10:00:60Z",
  "+002026-08-28T10:00:00Z",
  "2026-08-28T10:00:00.1234567890Z",
  "2026-08-28T10:00:00+0100",
  "0000-00-00T00:00:00Z",
  "9999-12-31T23:59:59.999999999-23:59",
  "2026-08-28T10:00:00+24:00",
  "１２３４-08-28T10:00:00Z",
);
const enumJunk = fc.constantFrom("ACCEPTED", "Accepted", "accepted ", "match\u0000", "ok", "verified", "observed ", "yes", "null", "__proto__");
const hugeish = fc.oneof(
  fc.integer({ min: 4090, max: 4100 }).map((n) => "x".repeat(n)), // around the 4096-character text limit
  fc.integer({ min: 195, max: 205 }).map((n) => "i".repeat(n)), // around the 200-character id limit
  fc.integer({ min: 65530, max: 65540 }).map((n) => "e".repeat(n)), // around the 64 KiB evidence limit
);
const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 1e308, -5e-324, "", " ", [], {}, [null], { a: 1 }, "null", "true", "0"), weight: 4 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 2 },
  { arbitrary: weirdText, weight: 2 },
  { arbitrary: enumJunk, weight: 1 },
  { arbitrary: badTimestamp, weight: 1 },
  { arbitrary: hugeish, weight: 1 },
);
const idSuffix = fc.constantFrom(" ", "/x", "?x", "#x", "%", "%41", "\\", "\u0000", "\t", "\u007f", "\u0085", "\u00a0", "é", "💥", "\u200b", "a".repeat(150), "a".repeat(190));

const params = fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
const named = fc.oneof(fieldText(20), fc.record({ name: fieldText(20), version: fc.stringMatching(/^[0-9]{1,2}(\.[0-9]{1,2}){0,2}$/) }, { requiredKeys: [] }));
const fingerprint = fc.constantFrom("sha256:aa", "sha256:bb");
const intentArb = fc.record({ target: fieldText(), effect: fieldText(), fingerprint, params }, { requiredKeys: [] });
const receiptArb = fc.record(
  {
    status: fc.constantFrom(...receiptStatuses),
    observed_at: timestamp,
    receipt_id: fc.option(fieldText(20), { nil: null }),
    params,
    raw: fc.jsonValue({ maxDepth: 2 }),
    effects: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 2 }),
    environment: fc.record({ endpoint: fieldText(), region: fieldText(10) }),
    preconditions_checked: fc.array(fieldText(10), { maxLength: 2 }),
    partial: fc.boolean(),
  },
  { requiredKeys: ["status", "observed_at"] },
);
const evidenceArb = fc.oneof(fieldText(), fc.record({ object_id: fieldText(20), fingerprint, url: fieldText() }, { requiredKeys: [] }));
const readArb = fc.record(
  { status: fc.constantFrom(...readStatuses), observed_at: timestamp, evidence: evidenceArb, reader: fc.record({ identity: fieldText(10) }) },
  { requiredKeys: ["status", "observed_at"] },
);
const sideEffectsArb = fc.array(
  fc.record({ name: fieldText(20).filter((s) => s.length > 0), status: fc.constantFrom(...sideEffectStatuses) }),
  { maxLength: 3 },
);

/** A valid record without its operation_id (added where the request is put together). */
const recordBody = fc
  .record(
    {
      trajectory_id: fc.stringMatching(/^traj-[a-z0-9]{1,6}$/),
      depends_on: fc.array(fc.stringMatching(/^dep-[a-z0-9]{1,6}$/), { maxLength: 2 }),
      agent: named,
      tool: named,
      claimed_outcome: fc.constantFrom("success", "failure", "unknown"),
      intent: intentArb,
      receipt: receiptArb,
      canonical_read: fc.oneof(readArb, fc.array(readArb, { minLength: 1, maxLength: 3 })),
      side_effects: sideEffectsArb,
      idempotency: fc.record({ enforced: fc.boolean(), key: fieldText(20) }, { requiredKeys: [] }),
      extra: fc.dictionary(fc.stringMatching(/^x_[a-z]{1,6}$/), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
    },
    { requiredKeys: [] },
  )
  .map(({ extra, ...rest }) => {
    const r: Record<string, unknown> = { ...rest, ...(extra ?? {}) };
    if (r.intent === undefined && r.receipt === undefined && r.canonical_read === undefined && r.side_effects === undefined) r.intent = {};
    return r;
  });

const withId = (id: string, body: Record<string, unknown>): Record<string, unknown> => ({ operation_id: id, ...body });

/** Every path in a JSON value (the root is []), for mutations and insertions. */
function pathsOf(value: unknown, objectsOnly = false): (string | number)[][] {
  const out: (string | number)[][] = [];
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v: value, path: [] }];
  while (stack.length) {
    const { v, path } = stack.pop()!;
    if (!objectsOnly || isPlainObject(v)) out.push(path);
    if (Array.isArray(v)) v.forEach((c, i) => stack.push({ v: c, path: [...path, i] }));
    else if (isPlainObject(v)) for (const [k, c] of Object.entries(v)) stack.push({ v: c, path: [...path, k] });
  }
  return out.sort((a, b) => a.length - b.length || JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

function getAt(root: unknown, path: (string | number)[]): unknown {
  let v = root;
  for (const k of path) v = (v as Record<string | number, unknown>)[k];
  return v;
}

type Mutation = { at: number; kind: "set"; value: unknown } | { at: number; kind: "delete" } | { at: number; kind: "idSuffix"; suffix: string };
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.record({ at: fc.nat(), kind: fc.constant("set" as const), value: wrongValue }), weight: 6 },
  { arbitrary: fc.record({ at: fc.nat(), kind: fc.constant("delete" as const) }), weight: 2 },
  { arbitrary: fc.record({ at: fc.nat(), kind: fc.constant("idSuffix" as const), suffix: idSuffix }), weight: 1 },
);

/** Applies mutations to a copy; the root may be replaced. */
function mutate(record: Record<string, unknown>, mutations: Mutation[]): unknown {
  let root: unknown = structuredClone(record);
  for (const m of mutations) {
    if (m.kind === "idSuffix") {
      if (isPlainObject(root) && typeof root.operation_id === "string") root.operation_id = `${root.operation_id}${m.suffix}`;
      continue;
    }
    const paths = pathsOf(root);
    const path = paths[m.at % paths.length];
    if (path.length === 0) {
      if (m.kind === "set") root = m.value;
      continue;
    }
    const parent = getAt(root, path.slice(0, -1)) as Record<string | number, unknown>;
    const key = path[path.length - 1];
    if (m.kind === "delete") {
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key];
    } else {
      parent[key] = structuredClone(m.value);
    }
  }
  return root;
}

/** Inserts `"@@PK@@": "@@PV@@"` into the n-th plain object of a value (to be swapped for raw text). */
function insertPlaceholder(value: unknown, at: number): unknown {
  const copy = structuredClone(value);
  const objects = pathsOf(copy, true);
  const target = getAt(copy, objects[at % objects.length]) as Record<string, unknown>;
  target["@@PK@@"] = "@@PV@@";
  return copy;
}

/** Replaces the n-th string value of a value (or, with none, inserts one) with "@@PV@@". */
function replaceString(value: unknown, at: number): unknown {
  const copy = structuredClone(value);
  const strings = pathsOf(copy).filter((p) => p.length > 0 && typeof getAt(copy, p) === "string" && p[0] !== "operation_id");
  if (!strings.length) {
    (copy as Record<string, unknown>).x_value = "@@PV@@";
    return copy;
  }
  const path = strings[at % strings.length];
  (getAt(copy, path.slice(0, -1)) as Record<string | number, unknown>)[path[path.length - 1]] = "@@PV@@";
  return copy;
}

// ---------------------------------------------------------------------------------------------
// Generators: ingest requests
// ---------------------------------------------------------------------------------------------

type IngestReq = { label: string; parts: Part[]; contentType: string | null; stream?: boolean };
const JSON_TYPE = "application/json";
const jsonReq = (label: string, text: string): IngestReq => ({ label, parts: [text], contentType: JSON_TYPE });

/** Valid records mutated field by field (wrong types, enums, timestamps, ids), single or in batches. */
const mutatedReq: fc.Arbitrary<IngestReq> = fc.oneof(
  fc.tuple(recordBody, fc.array(mutationArb, { maxLength: 3 })).map(([body, ms]) => jsonReq("mutated", JSON.stringify(mutate(withId(idToken(0), body), ms)))),
  fc
    .tuple(
      fc.array(fc.tuple(recordBody, fc.array(mutationArb, { maxLength: 2 })), { minLength: 1, maxLength: 6 }),
      fc.constantFrom("none", "none", "repeat-same", "repeat-changed", "junk-items"),
    )
    .map(([items, extra]) => {
      const records: unknown[] = items.map(([body, ms], i) => mutate(withId(idToken(i), body), ms));
      if (extra === "repeat-same") records.push(structuredClone(records[0]));
      if (extra === "repeat-changed") records.push(withId(idToken(0), { receipt: { status: "rejected", observed_at: "2026-08-28T10:00:00Z" }, intent: { target: "changed" } }));
      if (extra === "junk-items") records.push(null, 1, "x", [], {}, { operation_id: idToken(99) });
      return jsonReq("mutated-batch", JSON.stringify({ records }));
    }),
);

/** Arbitrary JSON values and almost-JSON texts. */
const randomJsonReq: fc.Arbitrary<IngestReq> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => jsonReq("json", JSON.stringify(v))),
  fc.json({ maxDepth: 4 }).map((t) => jsonReq("json", t)),
  fc
    .anything({ maxDepth: 3, stringUnit: "binary", withBoxedValues: true, withMap: true, withSet: true, withDate: true, withTypedArray: true, withSparseArray: true })
    .map((v) => jsonReq("anything", JSON.stringify(v) ?? "null")),
  fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 5 }).map((items) => jsonReq("json-batch", JSON.stringify({ records: items }))),
  fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }).map((d) => jsonReq("json-record", JSON.stringify({ operation_id: idToken(0), ...d }))),
  fc.jsonValue({ maxDepth: 2 }).map((v) => jsonReq("json-records-value", JSON.stringify({ records: v }))),
  fc
    .constantFrom("{", "}", "[", "nul", "tru", '{"a":}', "{'a':1}", "{a:1}", "[1,]", '{"a":1,}', "01", "1.", ".5", "+1", "0x10", "NaN", "Infinity", '"\\x41"', '"\\u12"', '"abc', "/*c*/{}", "{}//", "{} {}", "\u00a0{}", "\t\n {} \r\n", "[]", "{}", '{"records":[]}', '{"records":null}', "null", '""', "1e999")
    .map((t) => jsonReq("almost-json", t)),
);

const PROTO_KEYS = ["__proto__", "constructor", "prototype", "toString", "valueOf", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString", "__defineGetter__", "__lookupSetter__", "toJSON", "then"];
const protoValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
  fc.constantFrom('{"polluted":true}', '{"prototype":{"polluted":true}}', '{"__proto__":{"polluted":true}}', "null", '"x"', "1", "[]", "{}"),
);

/** `__proto__`, `constructor`, `prototype` and other Object.prototype names as keys, written as raw JSON text. */
const protoReq: fc.Arbitrary<IngestReq> = fc
  .record({ body: recordBody, key: fc.constantFrom(...PROTO_KEYS), value: protoValue, at: fc.nat(), batch: fc.boolean(), companion: recordBody })
  .map(({ body, key, value, at, batch, companion }) => {
    const record = withId(idToken(0), body);
    const doc = batch ? { records: [record, withId(idToken(1), companion)] } : record;
    const text = JSON.stringify(insertPlaceholder(doc, at));
    return jsonReq(`proto:${key}`, swapRaw(text, { '"@@PK@@"': JSON.stringify(key), '"@@PV@@"': value }));
  });

/** Lone surrogates (as \u escapes) and numbers beyond a double, in values and keys. */
const unrepresentableReq: fc.Arbitrary<IngestReq> = fc
  .record({
    body: recordBody,
    at: fc.nat(),
    raw: fc.constantFrom('"\\ud800"', '"a\\udfffb"', '"\\ud83d"', '"\\ude00x"', '"\\udbff\\udbff"', "1e999", "-1e999", "1e-999", "123456789012345678901234567890", "-0", "1E400"),
    where: fc.constantFrom("replace-string", "new-value", "new-key", "batch"),
  })
  .map(({ body, at, raw, where }) => {
    const record = withId(idToken(0), body);
    if (where === "replace-string") return jsonReq("unrepresentable", swapRaw(JSON.stringify(replaceString(record, at)), { '"@@PV@@"': raw }));
    if (where === "new-value") return jsonReq("unrepresentable", swapRaw(JSON.stringify(insertPlaceholder(record, at)), { '"@@PK@@"': '"x_value"', '"@@PV@@"': raw }));
    if (where === "new-key") {
      const key = raw.startsWith('"') ? raw : '"\\udc00"';
      return jsonReq("unrepresentable", swapRaw(JSON.stringify(insertPlaceholder(record, at)), { '"@@PK@@"': key, '"@@PV@@"': "1" }));
    }
    const doc = { records: [replaceString(record, at), withId(idToken(1), { intent: { target: "fine" } })] };
    return jsonReq("unrepresentable-batch", swapRaw(JSON.stringify(doc), { '"@@PV@@"': raw }));
  });

const CONTENT_TYPE_VARIANTS = [
  "application/json",
  "application/json; charset=utf-8",
  "Application/JSON",
  "application/json;charset=latin1",
  "application/json ; foo=bar",
  "text/plain",
  "text/json",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/jsonx",
  "application/json-seq",
  "application/ld+json",
  "application/problem+json",
  "*/*",
  "",
  null,
] as const;
const INVALID_UTF8 = [[0xff], [0xfe], [0xc0, 0x80], [0xc0, 0xa2], [0xc3], [0x80], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82], [0xf0, 0x9f, 0x92]];

/** Raw bytes: invalid UTF-8, BOMs, UTF-16, random bytes, wrong or missing content types, empty bodies. */
const bytesReq: fc.Arbitrary<IngestReq> = fc.oneof(
  fc.uint8Array({ maxLength: 256 }).map((b) => ({ label: "random-bytes", parts: [{ bytes: [...b] }], contentType: JSON_TYPE })),
  fc
    .record({ bad: fc.constantFrom(...INVALID_UTF8), where: fc.constantFrom("value", "key", "id", "outside") })
    .map(({ bad, where }) => {
      const bytes = { bytes: bad };
      const parts: Part[] =
        where === "value"
          ? [`{"operation_id":"${idToken(0)}","intent":{"target":"a`, bytes, `b"}}`]
          : where === "key"
            ? [`{"operation_id":"${idToken(0)}","intent":{"`, bytes, `":1}}`]
            : where === "id"
              ? [`{"operation_id":"${idToken(0)}`, bytes, `","intent":{}}`]
              : [`{"operation_id":"${idToken(0)}","intent":{}}`, bytes];
      return { label: "invalid-utf8", parts, contentType: JSON_TYPE };
    }),
  recordBody.map((body) => ({ label: "bom", parts: [{ bytes: [0xef, 0xbb, 0xbf] }, JSON.stringify(withId(idToken(0), body))], contentType: JSON_TYPE })),
  recordBody.map((body) => ({ label: "utf16", parts: [{ utf16le: JSON.stringify(withId(idToken(0), body)) }], contentType: JSON_TYPE })),
  fc
    .tuple(recordBody, fc.constantFrom(...CONTENT_TYPE_VARIANTS))
    .map(([body, contentType]) => ({ label: "content-type", parts: [JSON.stringify(withId(idToken(0), body))], contentType })),
  fc.constantFrom(...CONTENT_TYPE_VARIANTS).map((contentType) => ({ label: "empty", parts: [], contentType })),
  fc.constantFrom(" ", "\n", "\u0000", "{\u0000}").map((t) => jsonReq("whitespace", t)),
);

/** Nesting around the 64-level limit and far beyond it, written as text. */
const deepReq: fc.Arbitrary<IngestReq> = fc
  .record({
    depth: fc.oneof(fc.integer({ min: 55, max: 70 }), fc.integer({ min: 1_000, max: 30_000 })),
    open: fc.constantFrom("[", '{"a":'),
    where: fc.constantFrom("params", "root", "batch-item", "batch-wrapper", "records", "raw", "effects"),
  })
  .map(({ depth, open, where }) => {
    const close = open === "[" ? "]" : "}";
    const deep = (inner = "1"): Part[] => [{ repeat: open, times: depth }, inner, { repeat: close, times: depth }];
    const head = `{"operation_id":"${idToken(0)}"`;
    const parts: Part[] =
      where === "params"
        ? [`${head},"intent":{"params":{"deep":`, ...deep(), "}}}"]
        : where === "root"
          ? deep()
          : where === "batch-item"
            ? ['{"records":[', ...deep(), `,{"operation_id":"${idToken(1)}","intent":{}}]}`]
            : where === "batch-wrapper"
              ? [`{"records":[{"operation_id":"${idToken(1)}","intent":{}}],"x":`, ...deep(), "}"]
              : where === "records"
                ? ['{"records":', ...deep(), "}"]
                : where === "raw"
                  ? [`${head},"receipt":{"status":"accepted","observed_at":"2026-08-28T10:00:00Z","raw":`, ...deep(), "}}"]
                  : [`${head},"receipt":{"status":"accepted","observed_at":"2026-08-28T10:00:00Z","effects":[`, ...deep(), "]}}"];
    return { label: `deep:${where}`, parts, contentType: JSON_TYPE };
  });

/** Sizes near and over the limits: 1 MiB per record, 4 MiB per request, 500 records, 4096-character fields. */
const hugeReq: fc.Arbitrary<IngestReq> = fc.oneof(
  // one record around 1 MiB (a big params string)
  fc.integer({ min: -300, max: 300 }).map((delta) => ({
    label: "record~1MiB",
    parts: [`{"operation_id":"${idToken(0)}","intent":{"params":{"blob":"`, { repeat: "r", times: MAX_RECORD_BYTES - 60 + delta }, '"}}}'],
    contentType: JSON_TYPE,
  })),
  // one body around 4 MiB, sent with a length or streamed without one
  fc.record({ delta: fc.integer({ min: -64, max: 64 }), stream: fc.boolean() }).map(({ delta, stream }) => ({
    label: stream ? "body~4MiB-streamed" : "body~4MiB",
    parts: [`{"operation_id":"${idToken(0)}","intent":{"params":{"blob":"`, { repeat: "b", times: MAX_REQUEST_BYTES - 60 + delta }, '"}}}'],
    contentType: JSON_TYPE,
    stream,
  })),
  // far over 4 MiB
  fc.record({ mib: fc.integer({ min: 5, max: 12 }), stream: fc.boolean() }).map(({ mib, stream }) => ({
    label: "body>4MiB",
    parts: ['{"records":[{"operation_id":"', { repeat: "o", times: mib * MiB }, '"}]}'],
    contentType: JSON_TYPE,
    stream,
  })),
  // a batch whose items are around 1 MiB each, within or beyond 4 MiB in all (rarely: it stores MiBs)
  fc.record({ sizes: fc.array(fc.integer({ min: MAX_RECORD_BYTES - 200, max: MAX_RECORD_BYTES + 200 }), { minLength: 2, maxLength: 4 }) }).map(({ sizes }) => {
    const parts: Part[] = ['{"records":['];
    sizes.forEach((size, i) => {
      if (i) parts.push(",");
      parts.push(`{"operation_id":"${idToken(i)}","intent":{"params":{"blob":"`, { repeat: "n", times: size - 70 }, '"}}}');
    });
    parts.push("]}");
    return { label: "batch~1MiB-items", parts, contentType: JSON_TYPE };
  }),
  // too many records, or just enough (cheap invalid ones)
  fc.integer({ min: 498, max: 503 }).map((n) => jsonReq("batch~500", JSON.stringify({ records: Array.from({ length: n }, (_, i) => (i % 100 === 0 ? { operation_id: idToken(i), intent: {} } : { n: i })) }))),
  // long texts in fields with limits, long ids, long keys, many keys
  fc
    .record({ field: fc.constantFrom("target", "effect", "fingerprint", "receipt_id", "evidence", "name", "id", "trajectory_id", "key", "many-keys"), n: fc.integer({ min: -2, max: 2 }) })
    .map(({ field, n }) => {
      const long = (base: number) => "L".repeat(base + n);
      const record: Record<string, unknown> =
        field === "receipt_id"
          ? { operation_id: idToken(0), receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z", receipt_id: long(4096) } }
          : field === "evidence"
            ? { operation_id: idToken(0), canonical_read: { status: "match", observed_at: "2026-08-28T10:00:00Z", evidence: long(65536) } }
            : field === "name"
              ? { operation_id: idToken(0), side_effects: [{ name: long(4096), status: "observed" }] }
              : field === "id"
                ? { operation_id: `${idToken(0)}${"I".repeat(150 + n * 10)}`, intent: {} }
                : field === "trajectory_id"
                  ? { operation_id: idToken(0), trajectory_id: long(200), intent: {} }
                  : field === "key"
                    ? { operation_id: idToken(0), intent: { params: { [long(100_000)]: 1 } } }
                    : field === "many-keys"
                      ? { operation_id: idToken(0), intent: { params: Object.fromEntries(Array.from({ length: 20_000 + n * 5_000 }, (_, i) => [`k${i}`, i])) } }
                      : { operation_id: idToken(0), intent: { [field]: long(4096) } };
      return jsonReq(`long:${field}`, JSON.stringify(record));
    }),
);

// ---------------------------------------------------------------------------------------------
// Duplicate keys (raw text: a JS object cannot hold two)
// ---------------------------------------------------------------------------------------------

/** Adds a second occurrence of a key into the n-th object of `doc` (as raw text). */
function duplicateKeyText(doc: unknown, at: number, value: string, escape: boolean, fresh: string): string {
  const copy = structuredClone(doc);
  const objects = pathsOf(copy, true);
  const target = getAt(copy, objects[at % objects.length]) as Record<string, unknown>;
  const keys = Object.keys(target);
  const key = keys.length ? keys[at % keys.length] : fresh;
  const spelled = escape && key.length ? JSON.stringify(key).replace(/^"(.)/, (_, c: string) => `"\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`) : JSON.stringify(key);
  if (!keys.length) target[key] = "@@FIRST@@";
  target["@@PK@@"] = "@@PV@@";
  return swapRaw(JSON.stringify(copy), { '"@@PK@@"': spelled, '"@@PV@@"': value, '"@@FIRST@@"': "0" });
}

const duplicateIngestReq: fc.Arbitrary<IngestReq> = fc.oneof(
  fc
    .record({ body: recordBody, at: fc.nat(), value: fc.jsonValue({ maxDepth: 1 }).map((v) => JSON.stringify(v)), escape: fc.boolean(), batch: fc.boolean() })
    .map(({ body, at, value, escape, batch }) => {
      const record = withId(idToken(0), body);
      const doc = batch ? { records: [withId(idToken(1), { intent: {} }), record] } : record;
      return jsonReq("duplicate-key", duplicateKeyText(doc, at, value, escape, "k"));
    }),
  fc.constantFrom(
    `{"operation_id":"${idToken(0)}","operation_id":"${idToken(1)}","intent":{}}`,
    `{"operation_id":"${idToken(0)}","intent":{},"operation_id":"${idToken(0)}"}`,
    `{"operation_id":"${idToken(0)}","receipt":{"status":"rejected","observed_at":"2026-08-28T10:00:00Z","status":"accepted"}}`,
    `{"operation_id":"${idToken(0)}","canonical_read":{"status":"absent","observed_at":"2026-08-28T10:05:00Z","status":"match","evidence":"x"}}`,
    `{"records":[{"operation_id":"${idToken(0)}","intent":{}}],"records":[{"operation_id":"${idToken(1)}","intent":{}}]}`,
    `{"records":[{"operation_id":"${idToken(0)}","intent":{},"intent":{"target":"b"}}]}`,
    `{"operation_id":"${idToken(0)}","\\u0069ntent":{},"intent":{"target":"b"}}`,
    `{"operation_id":"${idToken(0)}","intent":{"params":{"a":1,"a":1}}}`,
    `{"operation_id":"${idToken(0)}","__proto__":{},"__proto__":{}}`,
    `{"operation_id":"${idToken(0)}","intent":{"":1,"":2}}`,
  ).map((t) => jsonReq("duplicate-key", t)),
);

// ---------------------------------------------------------------------------------------------
// Running ingest cases
// ---------------------------------------------------------------------------------------------

type IngestCase = { requests: IngestReq[]; companion: boolean };
/** A run: `size` fuzzed requests sent at once, half the time with a valid companion beside them. */
const ingestRun = (req: fc.Arbitrary<IngestReq>, size: number): fc.Arbitrary<IngestCase> =>
  fc.record({ requests: fc.array(req, { minLength: size, maxLength: size }), companion: fc.boolean() });

/** A small valid record sent beside the fuzzed ones: it must be accepted, whatever its neighbours do. */
const COMPANION: IngestReq = {
  label: "companion",
  parts: [JSON.stringify({ operation_id: idToken(0), receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" }, canonical_read: { status: "absent", observed_at: "2026-08-28T10:05:00Z" } })],
  contentType: JSON_TYPE,
};

type Stats = Map<string, number>;
const bump = (stats: Stats, key: string) => stats.set(key, (stats.get(key) ?? 0) + 1);
const showStats = (stats: Stats) => [...stats].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}: ${v}`).join(", ");

let ingestToken = "";

async function runIngestCase(c: IngestCase, stats: Stats) {
  const casePrefix = nextCasePrefix();
  const requests = c.companion ? [...c.requests, COMPANION] : c.requests;
  const prepared = requests.map((req, i) => {
    const prefix = `${casePrefix}${i}-`;
    const bytes = render(req.parts, substituteIds(prefix));
    return { req, bytes, model: modelIngest(bytes, req.contentType, prefix) };
  });
  const before = seenSeq;
  const replies = await Promise.all(
    prepared.map(({ req, bytes }) => http("POST", "/api/v1/receipts", { token: ingestToken, body: bytes, contentType: req.contentType, stream: req.stream })),
  );
  const accepted: Accepted[] = [];
  prepared.forEach(({ req, bytes, model }, i) => {
    const context = () =>
      `[${req.label}${req.stream ? ", streamed" : ""}] ` +
      describeExchange("POST", "/api/v1/receipts", req.contentType, bytes, replies[i]) +
      (prepared.length > 1 ? `\n  (sent at the same time as: ${prepared.filter((_, j) => j !== i).map((p) => p.req.label).join(", ")})` : "");
    accepted.push(...judgeIngest(model, replies[i], context));
    bump(stats, `${req.label === "companion" ? "companion " : ""}${replies[i].status}`);
  });

  // Nothing stored from a refused request: every record appended belongs to an accepted operation…
  const acceptedIds = new Set(accepted.map((a) => a.id));
  const appended = await appendedSinceLastLook();
  const summary = () => prepared.map(({ req, bytes }, i) => describeExchange("POST", "/api/v1/receipts", req.contentType, bytes, replies[i])).join("\n");
  for (const r of appended) {
    assertOrThrow(
      r.kind === "stage" && r.operationId !== null && acceptedIds.has(r.operationId),
      () => `a ${r.kind} record (seq ${r.seq}, operation ${JSON.stringify(r.operationId)}) was stored that no accepted request or item answered for\n${summary()}`,
    );
  }
  // …the operations created are exactly those answered 201…
  const createdIds = new Set(await operationsCreatedAfter(before));
  const answered201 = new Set(accepted.filter((a) => a.status === 201).map((a) => a.id));
  assertOrThrow(
    createdIds.size === answered201.size && [...answered201].every((id) => createdIds.has(id)),
    () => `operations created ${JSON.stringify([...createdIds])} ≠ operations answered 201 ${JSON.stringify([...answered201])}\n${summary()}`,
  );
  // …and an accepted record stored exactly its stage records (a duplicate, none).
  const perId = new Map<string, number>();
  for (const r of appended) perId.set(r.operationId!, (perId.get(r.operationId!) ?? 0) + 1);
  const acceptances = new Map<string, Accepted[]>();
  for (const a of accepted) acceptances.set(a.id, [...(acceptances.get(a.id) ?? []), a]);
  for (const [id, list] of acceptances) {
    const stored = perId.get(id) ?? 0;
    if (list.length === 1 && list[0].alone && list[0].record && list[0].status === 201) {
      const expected = stageRecordCount(list[0].record);
      if (expected !== null) {
        assertOrThrow(stored === expected, () => `operation ${id} stored ${stored} stage records; its record has ${expected}\n${summary()}`);
      }
    }
    if (list.every((a) => a.duplicate)) assertOrThrow(stored === 0, () => `a duplicate of ${id} stored ${stored} records\n${summary()}`);
    else assertOrThrow(stored > 0, () => `operation ${id} was accepted as new content but nothing was stored\n${summary()}`);
  }
}

/** `cases` fuzzed requests, sent `size` at a time. */
async function ingestProperty(name: string, req: fc.Arbitrary<IngestReq>, cases: number, size: number) {
  const stats: Stats = new Map();
  const numRuns = Math.ceil(cases / size);
  await fc.assert(
    fc.asyncProperty(ingestRun(req, size), guarded((c) => runIngestCase(c, stats))),
    fcOptions(numRuns),
  );
  await expectHealthy();
  console.log(`fuzz ${name}: ${numRuns * size} cases in ${numRuns} runs of ${size}; statuses ${showStats(stats)}`);
}

// ---------------------------------------------------------------------------------------------
// Corrections
// ---------------------------------------------------------------------------------------------

type CorrReq = { label: string; parts: Part[]; contentType: string | null };
/** One fuzzed correction: its operation (a pool index, or an unknown operation) and its request. */
type CorrCase = { target: number; missing: boolean; req: CorrReq };

const LAST = "@@LAST@@";
const corrJson = (label: string, value: unknown): CorrReq => ({ label, parts: [JSON.stringify(value)], contentType: JSON_TYPE });

const correctionBody = fc
  .record(
    {
      action: fc.oneof({ arbitrary: fc.constantFrom("resolve", "retract", "reopen"), weight: 6 }, { arbitrary: wrongValue, weight: 1 }),
      outcome: fc.oneof({ arbitrary: fc.constantFrom("verified", "not_applied", "compensated"), weight: 4 }, { arbitrary: wrongValue, weight: 1 }),
      reason: fc.oneof(
        { arbitrary: fieldText(60).filter((s) => s.trim().length > 0), weight: 6 },
        { arbitrary: wrongValue, weight: 1 },
        { arbitrary: fc.integer({ min: 3995, max: 4005 }).map((n) => "r".repeat(n)), weight: 1 },
      ),
      evidence: fc.oneof(
        { arbitrary: fc.record({ object_id: fieldText(20), url: fieldText(30), fingerprint }, { requiredKeys: [] }), weight: 4 },
        { arbitrary: fc.constant(null), weight: 1 },
        { arbitrary: wrongValue, weight: 1 },
        { arbitrary: fc.record({ object_id: wrongValue, extra: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] }), weight: 1 },
      ),
      expected_last_correction_id: fc.oneof(
        { arbitrary: fc.constant(LAST), weight: 6 },
        { arbitrary: fc.constant(null), weight: 1 },
        { arbitrary: fc.uuid(), weight: 1 },
        { arbitrary: wrongValue, weight: 1 },
      ),
      extra: fc.oneof(
        { arbitrary: fc.constant({}), weight: 4 },
        { arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { minKeys: 1, maxKeys: 2 }), weight: 1 },
      ),
    },
    { requiredKeys: [] },
  )
  .map(({ extra, ...rest }) => ({ ...rest, ...(extra ?? {}) }) as Record<string, unknown>);

/** Well-formed corrections naming the latest correction: the rules decide between 201 and 422. */
const wellFormedCorrection = fc
  .record({
    action: fc.constantFrom("resolve", "retract", "reopen"),
    outcome: fc.constantFrom("verified", "not_applied", "compensated"),
    reason: fieldText(60).filter((s) => s.trim().length > 0),
    evidence: fc.option(fc.record({ object_id: fieldText(20), url: fieldText(30), fingerprint }, { requiredKeys: [] }), { nil: undefined }),
  })
  .map(({ action, outcome, reason, evidence }) => ({
    action,
    ...(action === "resolve" ? { outcome } : {}),
    reason,
    ...(evidence ? { evidence } : {}),
    expected_last_correction_id: LAST,
  }));

const correctionReq: fc.Arbitrary<CorrReq> = fc.oneof(
  { arbitrary: correctionBody.map((b) => corrJson("fields", b)), weight: 10 },
  { arbitrary: wellFormedCorrection.map((b) => corrJson("well-formed", b)), weight: 4 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => corrJson("json", v)), weight: 2 },
  {
    arbitrary: fc.constantFrom("{", "", "null", "[]", '"resolve"', "{'action':'resolve'}", '{"action":"resolve",}', "1e999").map((t) => ({ label: "almost-json", parts: [t], contentType: JSON_TYPE })),
    weight: 1,
  },
  {
    arbitrary: fc
      .record({ body: correctionBody, key: fc.constantFrom(...PROTO_KEYS), value: protoValue, at: fc.nat() })
      .map(({ body, key, value, at }) => ({ label: `proto:${key}`, parts: [swapRaw(JSON.stringify(insertPlaceholder(body, at)), { '"@@PK@@"': JSON.stringify(key), '"@@PV@@"': value })], contentType: JSON_TYPE })),
    weight: 2,
  },
  {
    arbitrary: fc
      .record({ body: correctionBody, at: fc.nat(), raw: fc.constantFrom('"\\ud800"', '"why \\udfff"', '"\\ud83d"') })
      .map(({ body, at, raw }) => ({ label: "lone-surrogate", parts: [swapRaw(JSON.stringify(replaceString({ reason: "r", ...body }, at)), { '"@@PV@@"': raw })], contentType: JSON_TYPE })),
    weight: 2,
  },
  {
    arbitrary: fc
      .record({ depth: fc.oneof(fc.integer({ min: 5, max: 12 }), fc.integer({ min: 1000, max: 50_000 })), open: fc.constantFrom("[", '{"a":') })
      .map(({ depth, open }) => ({
        label: "deep",
        parts: ['{"action":"resolve","outcome":"not_applied","reason":"deep","evidence":{"object_id":', { repeat: open, times: depth }, '"x"', { repeat: open === "[" ? "]" : "}", times: depth }, "}}"],
        contentType: JSON_TYPE,
      })),
    weight: 1,
  },
  {
    arbitrary: fc.integer({ min: -40, max: 40 }).map((delta) => ({
      label: "body~64KiB",
      parts: [`{"action":"resolve","outcome":"not_applied","expected_last_correction_id":"${LAST}","reason":"`, { repeat: "w", times: MAX_CORRECTION_BYTES - 110 + delta }, '"}'],
      contentType: JSON_TYPE,
    })),
    weight: 1,
  },
  {
    arbitrary: fc.record({ bad: fc.constantFrom(...INVALID_UTF8) }).map(({ bad }) => ({
      label: "invalid-utf8",
      parts: ['{"action":"resolve","outcome":"not_applied","reason":"', { bytes: bad }, '"}'],
      contentType: JSON_TYPE,
    })),
    weight: 1,
  },
  {
    arbitrary: fc.tuple(correctionBody, fc.constantFrom(...CONTENT_TYPE_VARIANTS)).map(([b, contentType]) => ({ label: "content-type", parts: [JSON.stringify(b)], contentType })),
    weight: 1,
  },
);

const duplicateCorrectionReq: fc.Arbitrary<CorrReq> = fc.oneof(
  fc
    .record({ body: correctionBody, at: fc.nat(), value: fc.jsonValue({ maxDepth: 1 }).map((v) => JSON.stringify(v)), escape: fc.boolean() })
    .map(({ body, at, value, escape }) => corrJsonText("duplicate-key", duplicateKeyText({ action: "resolve", ...body }, at, value, escape, "k"))),
  fc.constantFrom(
    `{"action":"reopen","action":"resolve","outcome":"not_applied","reason":"x","expected_last_correction_id":"${LAST}"}`,
    `{"action":"resolve","outcome":"verified","outcome":"not_applied","reason":"x","expected_last_correction_id":"${LAST}"}`,
    `{"action":"resolve","outcome":"not_applied","reason":"x","expected_last_correction_id":"nobody","expected_last_correction_id":"${LAST}"}`,
    `{"action":"resolve","outcome":"verified","reason":"x","evidence":{"url":"a","url":"b"},"expected_last_correction_id":"${LAST}"}`,
  ).map((t) => corrJsonText("duplicate-key", t)),
);

function corrJsonText(label: string, text: string): CorrReq {
  return { label, parts: [text], contentType: JSON_TYPE };
}

type CorrModel = { statuses: number[] | "any"; code?: string; duplicate?: { key: string; path: string } };

function modelCorrection(bytes: Uint8Array, contentType: string | null, exists: boolean, last: string | null, concurrent: boolean): CorrModel {
  const parsed = modelJsonBody(bytes, contentType, MAX_CORRECTION_BYTES);
  if ("refused" in parsed) return { statuses: [parsed.refused.status], code: parsed.refused.code, duplicate: parsed.refused.duplicate };
  if (checkJsonShape(parsed.body, MAX_CORRECTION_DEPTH)) return { statuses: [422], code: "invalid_request" };
  const request = correctionRequestSchema.safeParse(parsed.body);
  if (!request.success) return { statuses: [422], code: "invalid_request" };
  if (!exists) return { statuses: [404], code: "not_found" };
  if (hasUnrepresentable(parsed.body)) return { statuses: "any" };
  const expected = request.data.expected_last_correction_id ?? null;
  if (expected !== last) return { statuses: [409], code: "conflict" };
  // Whether the rules allow it is the model-based test's business (issue 7, item 4).
  return { statuses: concurrent ? [201, 409, 422] : [201, 422] };
}

type PoolOp = { id: string; last: string | null; corrections: number };
const pool: PoolOp[] = [];
let reviewToken = "";

/** Reads the pool's corrections back from the server (after a failed run left the tracking behind). */
async function resyncPool() {
  for (const op of pool) {
    const res = await http("GET", `/api/v1/operations/${encodeURIComponent(op.id)}`, { token: readToken });
    if (res.status !== 200) continue;
    op.corrections = res.json.corrections.length;
    op.last = res.json.corrections.at(-1)?.id ?? null;
  }
}

/**
 * Sends the cases of a run at once. Two cases on the same operation race each other: both name
 * the same latest correction, so at most one may win.
 */
async function runCorrectionCases(cases: CorrCase[], stats: Stats) {
  const prepared = cases.map((c) => {
    const op = pool[c.target % pool.length];
    const id = c.missing ? `${nextCasePrefix()}missing` : op.id;
    const last = c.missing ? null : op.last;
    const racing = !c.missing && cases.filter((o) => !o.missing && o.target % pool.length === c.target % pool.length).length > 1;
    const bytes = render(c.req.parts, (text) => text.split(`"${LAST}"`).join(JSON.stringify(last)));
    const path = `/api/v1/operations/${encodeURIComponent(id)}/corrections`;
    return { c, op, id, last, path, bytes, model: modelCorrection(bytes, c.req.contentType, !c.missing, last, racing) };
  });
  const replies = await Promise.all(prepared.map(({ c, path, bytes }) => http("POST", path, { token: reviewToken, body: bytes, contentType: c.req.contentType })));
  const summary = () => prepared.map(({ c, path, bytes }, i) => `[${c.req.label}] ${describeExchange("POST", path, c.req.contentType, bytes, replies[i])}`).join("\n");
  const made = new Map<string, string[]>(); // operation id → corrections made in this run
  prepared.forEach(({ c, id, last, path, bytes, model }, i) => {
    const reply = replies[i];
    const others = () =>
      prepared
        .map((p, j) => (j === i ? "" : `\n  (sent together with: [${p.c.req.label}] ${describeExchange("POST", p.path, p.c.req.contentType, p.bytes, replies[j])})`))
        .join("");
    const context = () => `[${c.req.label}] ${describeExchange("POST", path, c.req.contentType, bytes, reply)}${others()}`;
    checkNoServerError(reply, context);
    bump(stats, String(reply.status));
    if (model.duplicate) checkDuplicateKeyRefusal(reply, model.duplicate, context);
    if (model.statuses !== "any") {
      assertOrThrow(model.statuses.includes(reply.status), () => `expected ${model.statuses} ${model.code ?? ""}\n${context()}`);
      if (model.code && model.statuses.length === 1) {
        assertOrThrow(reply.json.error.code === model.code, () => `expected the error ${model.code}\n${context()}`);
      }
    }
    if (reply.status === 201) {
      assertOrThrow(
        isPlainObject(reply.json?.correction) && typeof reply.json.correction.id === "string" && typeof reply.json.effective_outcome === "string",
        () => `a 201 without the correction\n${context()}`,
      );
      assertOrThrow(reply.json.correction.follows === last, () => `the correction follows ${reply.json.correction.follows}, not the latest ${last}\n${context()}`);
      made.set(id, [...(made.get(id) ?? []), reply.json.correction.id]);
    }
  });
  for (const [id, ids] of made) assertOrThrow(ids.length === 1, () => `${ids.length} corrections of ${id} won against the same latest correction\n${summary()}`);
  // A refused correction adds nothing; an accepted one exactly its record.
  const appended = await appendedSinceLastLook();
  const madeIds = [...made.values()].flat();
  assertOrThrow(
    appended.length === madeIds.length &&
      appended.every((r) => r.kind === "correction" && made.get(r.operationId ?? "")?.includes((JSON.parse(r.payload) as { id: string }).id)),
    () => `${appended.length} chain records appended for ${madeIds.length} accepted corrections: ${JSON.stringify(appended.map((r) => ({ seq: r.seq, kind: r.kind, operation_id: r.operationId })))}\n${summary()}`,
  );
  for (const { op, id } of prepared) {
    const ids = made.get(id);
    if (ids && op.id === id && op.last !== ids[0]) {
      op.last = ids[0];
      op.corrections++;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Query parameters: the list and the export
// ---------------------------------------------------------------------------------------------

const LIST_KEYS = ["outcome", "classified_as", "tool", "target", "agent", "failure_category", "overclaimed", "silent_failure", "trajectory_id", "needs_review", "q", "since", "until", "limit", "cursor", "order", "by", "newer_than", "metric", "part", "audit_sample"];
const EXPORT_KEYS = ["format", "since", "until", "operation_id", "trajectory_id"];
const CURSOR = "@@CURSOR@@";
const POOL_ID = "@@POOLID@@";
const POOL_TRAJECTORY = "@@POOLTRAJ@@";

const queryValue: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: weirdText, weight: 3 },
  { arbitrary: controlText, weight: 1 },
  { arbitrary: fc.constantFrom(...EFFECTIVE_OUTCOMES, ...OUTCOMES, ...AUDIT_FORMATS, "Verified", "NDJSON", "true", "false", "TRUE", "1", "0", "-1", "5", "6", "newest", "oldest", "recorded", "called", "yes", ...METRIC_NAMES, ...METRIC_PARTS), weight: 4 },
  { arbitrary: fc.constantFrom("1", "50", "200", "201", "1e3", "1e400", "0x10", " 7 ", "2.5", "-0", "Infinity", "NaN", "999999999999999", "9999999999999999", "00000000000001", CURSOR), weight: 3 },
  { arbitrary: timestamp, weight: 2 },
  { arbitrary: badTimestamp, weight: 1 },
  { arbitrary: fc.constantFrom(POOL_ID, POOL_TRAJECTORY, `${POOL_ID}x`), weight: 2 },
  { arbitrary: fc.integer({ min: 0, max: 8000 }).map((n) => "v".repeat(n)), weight: 1 },
);

/**
 * Free-text searches made to break a full-text engine's query syntax (FTS5 MATCH, PostgreSQL
 * tsquery): operators, quotes, a lone `*`, up to 200 characters of punctuation, odd Unicode. The
 * list answers them 200 (or 400 for text no database can hold), never a 5xx.
 */
const hostileSearch: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('"', '""', "'", "*", "**", "-", ":", "^", "NEAR(", "NEAR(a b, 2)", "a OR b", "NOT", "AND", "a AND NOT b", "col:x", "head:refund", "operation_id:x", "rowid", "a & b | !c", "a <-> b", "'a':*", "x:*", "!!", "(", ")", "{a b}", "+a -b", "\\", "%", "_", "日本語の検索", "🚀 refund", "e\u0301", "Ǆ", "\u200b", "ﬁ"),
  fc.array(fc.constantFrom('"', "*", "-", ":", "(", ")", "^", "&", "|", "!", "<", ">", "'", "\\", "{", "}", "+", ",", ".", "~", "%", "_", " "), { minLength: 1, maxLength: 200 }).map((cs) => cs.join("")),
  fc.tuple(fc.constantFrom("", '"', "-", "*", "NEAR(", "(", "^", "col:"), safeText(12), fc.constantFrom("", '"', "*", ")", ":", ":*", " OR", " AND", " NOT x")).map(([a, b, c]) => a + b + c),
  fc.string({ unit: "grapheme", maxLength: 60 }),
);

type QueryPart = { kind: "pair"; key: string; value: string } | { kind: "raw"; text: string };
const rawFragment = fc.constantFrom("%FF", "%", "%zz", "%C0%80", "%ED%A0%80", "&", "&&", "=", "==", "a", "+", "%2B", "%00", "q=%E0%A4%A", ";", "q=a;b", "limit=1&limit=2", "=x", "%26=%3D", "__proto__=1", "constructor=x", "q[]=1", "q=%F0%9F%92%A5");

const queryParts = (keys: string[]): fc.Arbitrary<QueryPart[]> =>
  fc.array(
    fc.oneof(
      { arbitrary: fc.record({ kind: fc.constant("pair" as const), key: fc.constantFrom(...keys), value: queryValue }), weight: 8 },
      { arbitrary: fc.record({ kind: fc.constant("pair" as const), key: fc.oneof(weirdText, fc.constantFrom("__proto__", "constructor", "toString", "Limit", " limit", "limit[]", "")), value: queryValue }), weight: 1 },
      { arbitrary: fc.record({ kind: fc.constant("raw" as const), text: rawFragment }), weight: 1 },
    ),
    { maxLength: 5 },
  );

let listPoolIds: string[] = [];
let listCursor = "1";
let poolTrajectory = "";

/**
 * Parameters the route must refuse as unknown. Not `__proto__`: Next.js drops it before the route
 * sees the URL (its searchParamsToUrlQuery assigns query["__proto__"], which sets the query
 * object's prototype instead of a key), so `?__proto__=x` is answered as if it were not there.
 */
function unknownParameters(keys: string[], known: string[]): string[] {
  return keys.filter((k) => !known.includes(k) && k !== "__proto__");
}

function renderQuery(parts: QueryPart[], substitutions: Record<string, string>): string {
  const sub = (v: string) => swapRaw(v, substitutions);
  return parts.map((p) => (p.kind === "raw" ? p.text : `${encodeURIComponent(sub(p.key))}=${encodeURIComponent(sub(p.value))}`)).join("&");
}

function checkQueryRefusal(reply: Reply, sentKeys: string[], knownKeys: string[], context: () => string) {
  assertOrThrow(reply.status === 400 && reply.json.error.code === "invalid_query", () => `a refused query must be 400 invalid_query\n${context()}`);
  const details = reply.json.error.details;
  assertOrThrow(
    Array.isArray(details) && details.length > 0 && details.every((d: any) => isPlainObject(d) && typeof d.path === "string" && typeof d.message === "string" && d.message.length > 0),
    () => `a refused query must say what is wrong in details: [{path, message}]\n${context()}`,
  );
  for (const d of details) {
    assertOrThrow(d.path === "query" || sentKeys.includes(d.path), () => `the refusal names ${JSON.stringify(d.path)}, which was not sent\n${context()}`);
  }
  const unknown = unknownParameters(sentKeys, knownKeys);
  for (const k of unknown) {
    if (/^[A-Za-z0-9_]+$/.test(k)) assertOrThrow(reply.json.error.message.includes(k), () => `the refusal should name the unknown parameter ${k}\n${context()}`);
  }
}

async function runListCase(parts: QueryPart[], stats: Stats, readToken: string) {
  const query = renderQuery(parts, { [CURSOR]: listCursor, [POOL_ID]: listPoolIds[0], [POOL_TRAJECTORY]: poolTrajectory });
  const path = `/api/v1/operations?${query}`;
  const reply = await http("GET", path, { token: readToken });
  const context = () => describeExchange("GET", path, undefined, undefined, reply);
  bump(stats, String(reply.status));
  if (reply.status === 431) {
    assertOrThrow(path.length > NODE_MAX_HEADER_BYTES / 2, () => `431 for a short URL\n${context()}`);
    return;
  }
  checkNoServerError(reply, context);
  const params = new URL(baseUrl + path).searchParams;
  const sent = Object.fromEntries(params);
  const keys = Object.keys(sent);
  const unknown = unknownParameters(keys, LIST_KEYS);
  if (unknown.length) {
    assertOrThrow(reply.status === 400, () => `an unknown parameter (${unknown.join(", ")}) is a 400\n${context()}`);
  }
  if (reply.status === 400) {
    checkQueryRefusal(reply, keys, LIST_KEYS, context);
    return;
  }
  assertOrThrow(reply.status === 200, () => `expected 200 or 400\n${context()}`);
  const body = reply.json as { items: any[]; next_cursor: string | null };
  assertOrThrow(
    isPlainObject(body) && Array.isArray(body.items) && (body.next_cursor === null || typeof body.next_cursor === "string"),
    () => `a list answer is {"items": [...], "next_cursor"}\n${context()}`,
  );
  const limit = sent.limit !== undefined ? Math.min(Number(sent.limit), 200) : 50;
  assertOrThrow(body.items.length <= limit, () => `${body.items.length} items for limit ${limit}\n${context()}`);
  // The documented filters hold for what came back.
  const filters: [string, string, (v: string) => unknown][] = [
    ["outcome", "effective_outcome", (v) => v],
    ["classified_as", "outcome", (v) => v],
    ["tool", "tool", (v) => v],
    ["target", "target", (v) => v],
    ["agent", "agent", (v) => v],
    ["trajectory_id", "trajectory_id", (v) => v],
    ["failure_category", "failure_category", (v) => Number(v)],
    ["needs_review", "needs_review", (v) => v === "true"],
    ["overclaimed", "overclaimed", (v) => v === "true"],
    ["audit_sample", "audit_sample", (v) => v === "true"],
  ];
  for (const item of body.items) {
    assertOrThrow(isPlainObject(item) && typeof item.operation_id === "string" && typeof item.cursor === "string", () => `an item without operation_id/cursor\n${context()}`);
    for (const [param, field, value] of filters) {
      if (sent[param] !== undefined) {
        assertOrThrow(item[field] === value(sent[param]), () => `${param}=${sent[param]} returned an item with ${field}=${JSON.stringify(item[field])}\n${context()}`);
      }
    }
  }
  if (body.next_cursor) listCursor = body.next_cursor;
}

type ExportCase = { base: QueryPart[]; extra: QueryPart[] };
const exportBase: fc.Arbitrary<QueryPart[]> = fc.oneof(
  { arbitrary: fc.constant<QueryPart[]>([{ kind: "pair", key: "operation_id", value: POOL_ID }]), weight: 8 },
  { arbitrary: fc.constant<QueryPart[]>([{ kind: "pair", key: "trajectory_id", value: POOL_TRAJECTORY }]), weight: 5 },
  { arbitrary: timestamp.map<QueryPart[]>((t) => [{ kind: "pair", key: "operation_id", value: POOL_ID }, { kind: "pair", key: "since", value: t }]), weight: 3 },
  {
    arbitrary: fc
      .tuple(fc.constantFrom("since", "until"), fc.oneof(queryValue, timestamp))
      .map<QueryPart[]>(([key, value]) => [{ kind: "pair", key: "operation_id", value: POOL_ID }, { kind: "pair", key, value }]),
    weight: 3,
  },
  { arbitrary: fc.constant<QueryPart[]>([{ kind: "pair", key: "since", value: "2999-01-01T00:00:00Z" }]), weight: 5 },
  { arbitrary: fc.stringMatching(/^[a-z0-9-]{1,20}$/).map<QueryPart[]>((id) => [{ kind: "pair", key: "operation_id", value: id }]), weight: 3 },
  { arbitrary: fc.constant<QueryPart[]>([]), weight: 1 }, // the whole chain
);

const EXPORT_FORMATS = new Set<string>(AUDIT_FORMATS);

/**
 * Sends a run's exports at once; each 200 must have been streamed whole and in its format, and
 * the chain must have grown by exactly one audit.exported event per 200 (a refusal records nothing).
 */
async function runExportCases(cases: ExportCase[], stats: Stats, exportToken: string) {
  const paths = cases.map((c) => `/api/v1/audit/export?${renderQuery([...c.base, ...c.extra], { [CURSOR]: listCursor, [POOL_ID]: listPoolIds[0], [POOL_TRAJECTORY]: poolTrajectory })}`);
  const replies = await Promise.all(paths.map((path) => http("GET", path, { token: exportToken })));
  paths.forEach((path, i) => judgeExport(path, replies[i], stats));
  const appended = await appendedSinceLastLook();
  const exported = replies.filter((r) => r.status === 200).length;
  assertOrThrow(
    appended.length === exported && appended.every((r) => r.kind === "security" && (JSON.parse(r.payload) as { type?: string }).type === "audit.exported"),
    () =>
      `${exported} exports answered 200 must add exactly ${exported} audit.exported events; added ${JSON.stringify(appended.map((r) => ({ seq: r.seq, kind: r.kind, payload: r.payload.slice(0, 200) })))}\n` +
      paths.map((path, i) => describeExchange("GET", path, undefined, undefined, replies[i])).join("\n"),
  );
}

function judgeExport(path: string, reply: Reply, stats: Stats) {
  const context = () => describeExchange("GET", path, undefined, undefined, reply);
  bump(stats, String(reply.status));
  if (reply.status === 431) {
    assertOrThrow(path.length > NODE_MAX_HEADER_BYTES / 2, () => `431 for a short URL\n${context()}`);
    return;
  }
  checkNoServerError(reply, context);
  const sent = Object.fromEntries(new URL(baseUrl + path).searchParams);
  const keys = Object.keys(sent);
  const unknown = unknownParameters(keys, EXPORT_KEYS);
  if (unknown.length) assertOrThrow(reply.status === 400, () => `an unknown parameter (${unknown.join(", ")}) is a 400\n${context()}`);
  if (sent.format !== undefined && !EXPORT_FORMATS.has(sent.format)) assertOrThrow(reply.status === 400, () => `an unknown format is a 400\n${context()}`);
  if (reply.status === 400) {
    checkQueryRefusal(reply, keys, EXPORT_KEYS, context);
    return;
  }
  assertOrThrow(reply.status === 200, () => `expected 200 or 400\n${context()}`);
  const format = (sent.format ?? "ndjson") as AuditFormat;
  assertOrThrow(reply.contentType === CONTENT_TYPES[format], () => `content-type ${reply.contentType} for ${format}\n${context()}`);
  let rows: any[] = [];
  try {
    if (format === "ndjson") rows = reply.text.split("\n").filter((l) => l.length).map((l) => JSON.parse(l));
    else if (format === "json") {
      const doc = JSON.parse(reply.text);
      assertOrThrow(Array.isArray(doc.records) && Array.isArray(doc.checkpoints), () => `a JSON export has records and checkpoints\n${context()}`);
      rows = doc.records;
    } else {
      assertOrThrow(reply.text.startsWith("seq,kind,operation_id,recorded_at,actor,payload,prev_hash,hash"), () => `a CSV export starts with its header\n${context()}`);
    }
  } catch (e) {
    throw new Error(`the export is not valid ${format}: ${(e as Error).message}\n${context()}`);
  }
  const records = rows.filter((r) => r.kind !== "checkpoint");
  if (sent.operation_id !== undefined) {
    assertOrThrow(records.every((r) => r.operation_id === sent.operation_id), () => `operation_id=${sent.operation_id} exported another operation's record\n${context()}`);
  }
  for (const [param, inRange] of [
    ["since", (t: number, bound: number) => t >= bound],
    ["until", (t: number, bound: number) => t < bound],
  ] as const) {
    if (sent[param] !== undefined) {
      const normalized = normalizeInstant(sent[param]);
      if (normalized !== null) {
        const bound = Date.parse(normalized);
        assertOrThrow(records.every((r) => inRange(Date.parse(r.recorded_at), bound)), () => `${param}=${sent[param]} exported a record outside the range\n${context()}`);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

let readToken = "";
let exportToken = "";

beforeAll(async () => {
  ingestToken = (await principal("reviewer", ["ingest", "verify", "read"])).token;
  readToken = (await principal("viewer", ["read"])).token;
  exportToken = (await principal("viewer", ["export"])).token;
  reviewToken = (await principal("reviewer", ["review", "read"])).token;

  // Operations in known states, for the export filters, the list cursors and the corrections.
  poolTrajectory = `${RUN}-traj`;
  const at = (m: number) => `2026-08-28T10:${String(m).padStart(2, "0")}:00Z`;
  const shapes: Record<string, unknown>[] = [
    { receipt: { status: "accepted", observed_at: at(0) } }, // uncertain
    { claimed_outcome: "success", receipt: { status: "accepted", observed_at: at(0) }, canonical_read: { status: "absent", observed_at: at(5) } }, // divergent, overclaimed
    { intent: { fingerprint: "sha256:aa" }, receipt: { status: "accepted", observed_at: at(0) }, canonical_read: { status: "match", observed_at: at(5), evidence: { object_id: "o-1", fingerprint: "sha256:aa" } } }, // verified
    { receipt: { status: "rejected", observed_at: at(0) } }, // rejected
    { claimed_outcome: "success", receipt: { status: "accepted", observed_at: at(0) } }, // uncertain, overclaimed
  ];
  const records = [...shapes, ...shapes].map((shape, i) => ({ operation_id: `${RUN}-pool-${i}`, trajectory_id: poolTrajectory, ...shape }));
  const res = await http("POST", "/api/v1/receipts", { token: ingestToken, body: Buffer.from(JSON.stringify({ records })), contentType: JSON_TYPE });
  expect(res.status).toBe(200);
  for (const r of records) pool.push({ id: r.operation_id, last: null, corrections: 0 });
  listPoolIds = records.map((r) => r.operation_id);
  const page = await http("GET", `/api/v1/operations?trajectory_id=${encodeURIComponent(poolTrajectory)}&limit=3`, { token: readToken });
  expect(page.status).toBe(200);
  listCursor = page.json.next_cursor;
});

// A "case" is one fuzzed request. A run sends several at once (the server sees concurrent bad and
// good requests, and the suite stays fast); every property gets RUNS cases of its family in all.
const LIST_GROUP = 4;
const EXPORT_GROUP = 2;
const PATH_GROUP = 4;
const CORRECTION_GROUP = 2;
const INGEST_GROUP = 2;

const runsFor = (cases: number, group: number) => Math.ceil(cases / group);

describe(`fuzz: bad input never gets a 5xx or stores anything (${RUNS} cases per endpoint family)`, () => {
  beforeEach(async () => {
    await lookAtHead();
  });

  it(
    "list: random, repeated, unknown and malformed query parameters",
    async () => {
      const stats: Stats = new Map();
      const numRuns = runsFor(RUNS, LIST_GROUP);
      await fc.assert(
        fc.asyncProperty(
          fc.array(queryParts(LIST_KEYS), { minLength: LIST_GROUP, maxLength: LIST_GROUP }),
          guarded(async (group) => {
            await Promise.all(group.map((parts) => runListCase(parts, stats, readToken)));
          }),
        ),
        fcOptions(numRuns),
      );
      expect(await appendedSinceLastLook()).toEqual([]); // reading records nothing
      await expectHealthy();
      console.log(`fuzz list: ${numRuns * LIST_GROUP} cases in ${numRuns} runs of ${LIST_GROUP}; statuses ${showStats(stats)}`);
    },
    TIME_LIMIT,
  );

  it(
    "list: hostile free-text searches (FTS operators, quotes, a lone *, punctuation, Unicode), alone and with other parameters",
    async () => {
      const stats: Stats = new Map();
      const numRuns = runsFor(share(0.3), LIST_GROUP);
      const searchCase = fc
        .tuple(hostileSearch, fc.oneof(fc.constant<QueryPart[]>([]), queryParts(LIST_KEYS.filter((k) => k !== "q"))))
        .map(([q, rest]): QueryPart[] => [{ kind: "pair", key: "q", value: q }, ...rest]);
      await fc.assert(
        fc.asyncProperty(
          fc.array(searchCase, { minLength: LIST_GROUP, maxLength: LIST_GROUP }),
          guarded(async (group) => {
            await Promise.all(group.map((parts) => runListCase(parts, stats, readToken)));
          }),
        ),
        fcOptions(numRuns),
      );
      expect(await appendedSinceLastLook()).toEqual([]);
      await expectHealthy();
      console.log(`fuzz list search: ${numRuns * LIST_GROUP} cases in ${numRuns} runs of ${LIST_GROUP}; statuses ${showStats(stats)}`);
    },
    TIME_LIMIT,
  );

  it(
    "export: random, repeated, unknown and malformed query parameters; a 200 is streamed to its end",
    async () => {
      const stats: Stats = new Map();
      const numRuns = runsFor(RUNS, EXPORT_GROUP);
      // The base keeps most exports small (one operation, one trajectory, or a range in the
      // future); the extra parameters can only narrow it (never `since`) or break it.
      const exportCase = fc.record({ base: exportBase, extra: queryParts(["format", "format", "format", "until", "operation_id", "trajectory_id"]) });
      await fc.assert(
        fc.asyncProperty(fc.array(exportCase, { minLength: EXPORT_GROUP, maxLength: EXPORT_GROUP }), guarded((group) => runExportCases(group, stats, exportToken))),
        fcOptions(numRuns),
      );
      await expectHealthy();
      console.log(`fuzz export: ${numRuns * EXPORT_GROUP} cases in ${numRuns} runs of ${EXPORT_GROUP}; statuses ${showStats(stats)}`);
    },
    TIME_LIMIT,
  );

  it(
    "corrections: random and malformed bodies against operations in known states",
    async () => {
      const stats: Stats = new Map();
      const numRuns = runsFor(share(0.7), CORRECTION_GROUP);
      const correctionCase = fc.record({
        target: fc.nat(),
        missing: fc.integer({ min: 0, max: 9 }).map((n) => n === 0), // a tenth go to an unknown operation
        req: correctionReq,
      });
      await fc.assert(
        fc.asyncProperty(fc.array(correctionCase, { minLength: CORRECTION_GROUP, maxLength: CORRECTION_GROUP }), guarded((group) => runCorrectionCases(group, stats), resyncPool)),
        fcOptions(numRuns),
      );
      // Every accepted correction is on its operation, in order; nothing else is.
      for (const op of pool) {
        const res = await http("GET", `/api/v1/operations/${encodeURIComponent(op.id)}`, { token: readToken });
        expect(res.status).toBe(200);
        expect(res.json.corrections).toHaveLength(op.corrections);
        expect(res.json.corrections.at(-1)?.id ?? null).toBe(op.last);
      }
      await expectHealthy();
      console.log(`fuzz corrections: ${numRuns * CORRECTION_GROUP} cases in ${numRuns} runs of ${CORRECTION_GROUP}; statuses ${showStats(stats)}`);
    },
    TIME_LIMIT,
  );

  it(
    "operation ids in the path: odd, encoded and malformed ids on GET /operations/{id} and POST …/corrections",
    async () => {
      const stats: Stats = new Map();
      const numRuns = runsFor(share(0.15), PATH_GROUP);
      const segment = fc.oneof(
        {
          // "." and ".." are resolved away by the URL itself: they never reach the route
          arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 40 }).map((s) => encodeURIComponent(s)).filter((s) => s !== "." && s !== ".."),
          weight: 4,
        },
        { arbitrary: fc.constantFrom("%FF", "%", "a%", "%zz", "%C0%80", "%ED%A0%80", "%E0%A4", "%00", "%2F", "a%2Fb", "%5C", "%25", "%2525", "%20", "+", "%E2%80%AE", "~", "%7E"), weight: 3 },
        { arbitrary: fc.integer({ min: 190, max: 5000 }).map((n) => "s".repeat(n)), weight: 1 },
        { arbitrary: fc.nat().map((n) => `@@POOL${n}@@`), weight: 2 },
        { arbitrary: fc.tuple(fc.nat(), fc.constantFrom("%FF", "%2F", "%00", "%20", "x")).map(([n, junk]) => `@@POOL${n}@@${junk}`), weight: 1 },
      );
      // A correction that can never be made (it names a latest correction that does not exist).
      const impossible = Buffer.from(JSON.stringify({ action: "reopen", reason: "fuzz", expected_last_correction_id: "not-a-correction" }));
      const pathCase = async ([raw, correct]: [string, boolean]) => {
        const seg = raw.replace(/@@POOL(\d+)@@/g, (_, n: string) => encodeURIComponent(pool[Number(n) % pool.length].id));
        const path = `/api/v1/operations/${seg}${correct ? "/corrections" : ""}`;
        const body = correct ? impossible : undefined;
        const reply = await http(correct ? "POST" : "GET", path, { token: correct ? reviewToken : readToken, body, contentType: correct ? JSON_TYPE : undefined });
        const context = () => describeExchange(correct ? "POST" : "GET", path, correct ? JSON_TYPE : undefined, body, reply);
        bump(stats, `${correct ? "POST" : "GET"} ${reply.status}`);
        checkNoServerError(reply, context);
        const found = pool.some((p) => encodeURIComponent(p.id) === seg);
        let decodable = true;
        try {
          decodeURIComponent(seg);
        } catch {
          decodable = false;
        }
        // A path that is not valid percent-encoded UTF-8 is the client's mistake: 400, whatever the route.
        if (!decodable) assertOrThrow(reply.status === 400 && reply.json?.error?.code === "invalid_request", () => `expected 400 invalid_request\n${context()}`);
        else if (correct) assertOrThrow(reply.status === (found ? 409 : 404), () => `expected ${found ? 409 : 404}\n${context()}`);
        else assertOrThrow(reply.status === (found ? 200 : 404), () => `expected ${found ? 200 : 404}\n${context()}`);
      };
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(segment, fc.boolean()), { minLength: PATH_GROUP, maxLength: PATH_GROUP }),
          guarded(async (group) => {
            await Promise.all(group.map(pathCase));
            const appended = await appendedSinceLastLook();
            assertOrThrow(appended.length === 0, () => `refused requests added ${appended.length} chain records: ${JSON.stringify(group)}`);
          }),
        ),
        fcOptions(numRuns),
      );
      await expectHealthy();
      console.log(`fuzz path ids: ${numRuns * PATH_GROUP} cases in ${numRuns} runs of ${PATH_GROUP}; statuses ${showStats(stats)}`);
    },
    TIME_LIMIT,
  );

  it(
    "corrections: a body with a duplicate object key is refused with 400 malformed_json naming the key",
    async () => {
      const stats: Stats = new Map();
      const numRuns = runsFor(share(0.15), CORRECTION_GROUP);
      const correctionCase = fc.record({ target: fc.nat(), missing: fc.constant(false), req: duplicateCorrectionReq });
      await fc.assert(
        fc.asyncProperty(fc.array(correctionCase, { minLength: CORRECTION_GROUP, maxLength: CORRECTION_GROUP }), guarded((group) => runCorrectionCases(group, stats), resyncPool)),
        fcOptions(numRuns),
      );
      await expectHealthy();
      console.log(`fuzz corrections duplicate keys: ${numRuns * CORRECTION_GROUP} cases in ${numRuns} runs of ${CORRECTION_GROUP}; statuses ${showStats(stats)}`);
    },
    TIME_LIMIT,
  );

  it(
    "ingest: valid records mutated field by field (wrong types, enums, timestamps, ids), single and batched",
    () => ingestProperty("ingest mutated", mutatedReq, share(0.32), INGEST_GROUP),
    TIME_LIMIT,
  );

  it("ingest: arbitrary JSON values and almost-JSON texts", () => ingestProperty("ingest json", randomJsonReq, share(0.17), INGEST_GROUP), TIME_LIMIT);

  it(
    "ingest: __proto__, constructor, prototype and other Object.prototype names as keys",
    () => ingestProperty("ingest proto keys", protoReq, share(0.1), INGEST_GROUP),
    TIME_LIMIT,
  );

  it(
    "ingest: invalid UTF-8, BOMs, UTF-16, random bytes, wrong content types, empty bodies",
    () => ingestProperty("ingest bytes", bytesReq, share(0.1), INGEST_GROUP),
    TIME_LIMIT,
  );

  it("ingest: nesting around and far beyond the 64-level limit", () => ingestProperty("ingest deep", deepReq, share(0.05), INGEST_GROUP), TIME_LIMIT);

  it(
    "ingest: sizes near and over the limits (1 MiB record, 4 MiB body, 500 records, field lengths)",
    () => ingestProperty("ingest huge", hugeReq, share(0.03), 1),
    TIME_LIMIT,
  );

  it(
    "ingest: lone surrogates and numbers beyond a double are refused or stored, never a 5xx",
    () => ingestProperty("ingest unrepresentable", unrepresentableReq, share(0.08), INGEST_GROUP),
    TIME_LIMIT,
  );

  it(
    "ingest: a body with a duplicate object key is refused with 400 malformed_json naming the key",
    () => ingestProperty("ingest duplicate keys", duplicateIngestReq, share(0.15), INGEST_GROUP),
    TIME_LIMIT,
  );
});
