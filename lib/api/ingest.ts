import "server-only";
import { can, type Principal } from "@/lib/domain/permissions";
import { checkJsonShape, isPlainObject } from "@/lib/domain/json";
import { clockSkewSeconds, futureRefusal, scopeRefusal, type Sender } from "@/lib/domain/trust";
import { operationRecordSchema } from "@/lib/domain/wire";
import type { IngestResult, ValidRecord } from "@/lib/store/ingest/records";
import { prepareRecord } from "@/lib/domain/stages";
import { submitIngest } from "@/lib/store/ingest/queue";
import { ingestPacer } from "@/lib/store/db/pace";
import { ingestTurn } from "@/lib/store/db/priority";
import { MiB } from "./body";
import { ApiError, invalid, refusalError, storeErrorAnswer } from "./errors";
import { countIngest, type IngestOutcome } from "@/lib/observability/metrics";

export const MAX_REQUEST_BYTES = 4 * MiB;
export const MAX_RECORD_BYTES = 1 * MiB;
export const MAX_BATCH = 500;

/** What a principal sends as: its email in the chain, who it is on the timeline, what it may do. */
export function senderOf(principal: Principal): Sender {
  return {
    actor: principal.email,
    sent_by: {
      via: principal.kind,
      user_id: principal.userId,
      email: principal.email,
      token_id: principal.kind === "token" ? principal.tokenId : null,
      token_name: principal.kind === "token" ? principal.tokenName : null,
    },
    rights: { userId: principal.userId, mayIngest: can(principal, "receipts:ingest"), mayVerify: can(principal, "receipts:verify"), isAdmin: principal.role === "admin" },
  };
}

/** Read once. The server checks it at start (lib/domain/settings.ts); under `next dev` a bad value fails the first ingest loudly. */
let skew: number | null = null;
const maxClockSkew = () => (skew ??= clockSkewSeconds(process.env.RECONCILE_MAX_CLOCK_SKEW));

/** Validates one record; returns the error it earns, or null. */
export function validate(raw: unknown, mayBeLarge: boolean, sender: Sender): ApiError | null {
  const shape = checkJsonShape(raw);
  if (shape) return new ApiError("invalid_record", `${shape.path}: ${shape.message}`, [shape]);
  if (!isPlainObject(raw)) return new ApiError("invalid_record", "a record must be a JSON object");
  // A record cannot be larger than the body it came in: only measure when the body could hold one.
  if (mayBeLarge && Buffer.byteLength(JSON.stringify(raw)) > MAX_RECORD_BYTES) {
    return new ApiError("too_large", "a record may be at most 1 MiB", { max_bytes: MAX_RECORD_BYTES });
  }
  const parsed = operationRecordSchema.safeParse(raw);
  if (!parsed.success) return invalid("invalid_record", parsed.error, { input: raw, schema: operationRecordSchema });
  // Who may decide: refused before anything is queued (ownership needs the database: ingestRecords).
  const refused = scopeRefusal(raw, sender.rights) ?? futureRefusal(raw, Date.now(), maxClockSkew());
  return refused ? refusalError(refused) : null;
}

/** One record's answer: refused with its error, or stored (201 when it created its operation, else 200). */
export type Answer = { index: number; error: ApiError } | { index: number; status: 200 | 201; body: Extract<IngestResult, { body: unknown }>["body"] };

/** Each stored or refused record counted once by outcome (reconcile_ingest_records_total). */
function counted(results: IngestResult[]): IngestResult[] {
  const n: Record<IngestOutcome, number> = { created: 0, appended: 0, duplicate: 0, refused: 0 };
  for (const r of results) n["error" in r ? "refused" : r.created ? "created" : r.body.duplicate ? "duplicate" : "appended"]++;
  for (const [outcome, count] of Object.entries(n)) countIngest(outcome as IngestOutcome, count);
  return results;
}

/** The queue's answer, counted; a request it refuses whole (overloaded) counts its records refused. */
async function submitCounted(records: ValidRecord[]): Promise<IngestResult[]> {
  try {
    return counted(await submitIngest(records));
  } catch (e) {
    countIngest("refused", records.length);
    throw e;
  }
}

const answerOf = (r: IngestResult): Answer =>
  "error" in r ? { index: r.index, error: storeErrorAnswer(r.error) } : { index: r.index, status: r.created ? 201 : 200, body: r.body };

const asItem = (a: Answer) =>
  "error" in a ? { index: a.index, status: a.error.status, ...a.error.toJSON() } : { index: a.index, status: a.status, ...a.body };

/**
 * Many records, each decided on its own (what a batch does with its items): the invalid ones
 * get their error, the valid ones are stored together. Results in the records' order.
 */
export async function ingestList(records: unknown[], sender: Sender, mayBeLarge: boolean): Promise<Answer[]> {
  const failed: Answer[] = [];
  const valid: ValidRecord[] = [];
  // Validating and canonicalising 4 MiB takes seconds on a slow core: in slices, outside the
  // lock, and not begun while a person waits for a page (lib/store/db/priority.ts).
  await ingestTurn();
  const pace = ingestPacer();
  for (const [index, raw] of records.entries()) {
    await pace();
    const error = validate(raw, mayBeLarge, sender);
    if (error) failed.push({ index, error });
    else {
      await pace();
      const record = raw as Record<string, unknown>;
      valid.push({ index, operationId: record.operation_id as string, raw: record, sender, prepared: prepareRecord(record) });
    }
  }
  countIngest("refused", failed.length);
  return [...failed, ...(await submitCounted(valid)).map(answerOf)].sort((a, b) => a.index - b.index);
}

/**
 * POST /api/v1/receipts: one record, or `{"records": [...]}`. Returns status and body.
 * A batch stores its valid items together; an invalid or conflicting item stores nothing.
 */
export async function ingestBody(body: unknown, principal: Principal, bodyBytes = Infinity): Promise<{ status: number; body: unknown }> {
  const mayBeLarge = bodyBytes > MAX_RECORD_BYTES;
  const sender = senderOf(principal);
  if (isPlainObject(body) && "records" in body && !("operation_id" in body)) {
    const records = body.records;
    if (!Array.isArray(records)) throw new ApiError("invalid_request", "records must be an array of operation records");
    if (records.length > MAX_BATCH) throw new ApiError("too_large", `a batch may hold at most ${MAX_BATCH} records`, { max_records: MAX_BATCH, records: records.length });
    if (!records.length) throw new ApiError("invalid_request", "records is empty: send at least one record");
    const results = await ingestList(records, sender, mayBeLarge);
    const allOk = results.every((r) => !("error" in r));
    return { status: allOk ? 200 : 207, body: { results: results.map(asItem) } };
  }
  const error = validate(body, mayBeLarge, sender);
  if (error) {
    countIngest("refused");
    throw error;
  }
  const raw = body as Record<string, unknown>;
  const [result] = (await submitCounted([{ index: 0, operationId: raw.operation_id as string, raw, sender, prepared: prepareRecord(raw) }])).map(answerOf);
  if ("error" in result) throw result.error;
  return { status: result.status, body: result.body };
}
