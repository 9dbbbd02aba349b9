import { checkJsonShape, isPlainObject } from "@/lib/domain/json";
import { futureRefusal, scopeRefusal, type Sender } from "@/lib/domain/trust";
import { describeIssues, operationRecordSchema } from "@/lib/domain/wire";
import { prepareRecord, type PreparedRecord } from "@/lib/domain/stages";
import { pacer } from "@/lib/store/pace";
import { MiB } from "./body";
import { ApiError, refusalError } from "./errors";

/**
 * What POST /api/v1/receipts checks before anything touches the database: the body's shape (one
 * record, or `{"records": [...]}`), each record's validity, the sender's rights over what it says,
 * and each valid record split and canonicalised. Pure, given the sender's rights and the clock,
 * so that it runs the same on the request's thread (the Next.js route) and in a worker thread
 * (ingest-pool.ts, the production server's fast path).
 */

export const MAX_REQUEST_BYTES = 4 * MiB;
export const MAX_RECORD_BYTES = 1 * MiB;
export const MAX_BATCH = 500;

export type CheckContext = {
  rights: Sender["rights"];
  /** Whether the body was large enough to hold a record over MAX_RECORD_BYTES. */
  mayBeLarge: boolean;
  /** RECONCILE_MAX_CLOCK_SKEW, read by the caller. */
  skewSeconds: number;
};

export type CheckedRecord = { index: number; operationId: string; raw: Record<string, unknown>; prepared: PreparedRecord };

/** A single record (refused as the request's error when invalid), or a batch's valid and refused items. */
export type Checked = { kind: "single"; record: CheckedRecord } | { kind: "batch"; valid: CheckedRecord[]; failed: { index: number; error: ApiError }[] };

/** Validates one record; returns the error it earns, or null. */
function validate(raw: unknown, ctx: CheckContext): ApiError | null {
  const shape = checkJsonShape(raw);
  if (shape) return new ApiError("invalid_record", `${shape.path}: ${shape.message}`, [shape]);
  if (!isPlainObject(raw)) return new ApiError("invalid_record", "a record must be a JSON object");
  // A record cannot be larger than the body it came in: only measure when the body could hold one.
  if (ctx.mayBeLarge && Buffer.byteLength(JSON.stringify(raw)) > MAX_RECORD_BYTES) {
    return new ApiError("too_large", "a record may be at most 1 MiB", { max_bytes: MAX_RECORD_BYTES });
  }
  const parsed = operationRecordSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = describeIssues(parsed.error);
    return new ApiError("invalid_record", issues.map((i) => `${i.path}: ${i.message}`).join("; "), issues);
  }
  // Who may decide: refused before anything is queued (ownership needs the database: ingestRecords).
  const refused = scopeRefusal(raw, ctx.rights) ?? futureRefusal(raw, Date.now(), ctx.skewSeconds);
  return refused ? refusalError(refused) : null;
}

const checked = (index: number, raw: Record<string, unknown>): CheckedRecord => ({ index, operationId: raw.operation_id as string, raw, prepared: prepareRecord(raw) });

/** A batch's items, each checked on its own: the valid ones, and the refused ones with their errors. */
export async function checkRecords(records: unknown[], ctx: CheckContext): Promise<Omit<Extract<Checked, { kind: "batch" }>, "kind">> {
  const valid: CheckedRecord[] = [];
  const failed: { index: number; error: ApiError }[] = [];
  // Validating and canonicalising 4 MiB takes seconds on a slow core: in slices, outside the lock.
  const pace = pacer();
  for (const [index, raw] of records.entries()) {
    await pace();
    const error = validate(raw, ctx);
    if (error) failed.push({ index, error });
    else {
      await pace();
      valid.push(checked(index, raw as Record<string, unknown>));
    }
  }
  return { valid, failed };
}

/** The request's checks; throws the ApiError a refused request (or a refused single record) earns. */
export async function checkIngest(body: unknown, ctx: CheckContext): Promise<Checked> {
  if (isPlainObject(body) && "records" in body && !("operation_id" in body)) {
    const records = body.records;
    if (!Array.isArray(records)) throw new ApiError("invalid_request", "records must be an array of operation records");
    if (records.length > MAX_BATCH) throw new ApiError("too_large", `a batch may hold at most ${MAX_BATCH} records`, { max_records: MAX_BATCH, records: records.length });
    if (!records.length) throw new ApiError("invalid_request", "records is empty: send at least one record");
    return { kind: "batch", ...(await checkRecords(records, ctx)) };
  }
  const error = validate(body, ctx);
  if (error) throw error;
  return { kind: "single", record: checked(0, body as Record<string, unknown>) };
}
