import type { z } from "zod";
import { describeRefusal, type RefusalOptions } from "@/lib/domain/refusal";
import { StoreError, type StoreErrorKind } from "@/lib/store/errors";
import { isDatabaseUnavailable, isStorageFull, UNAVAILABLE_RETRY_AFTER_SECONDS } from "@/lib/store/db/unavailable";
import { currentRequest } from "@/lib/observability/context";
import { log } from "@/lib/observability/log";
import { metrics } from "@/lib/observability/metrics";

/** One error class, one code → status table, one JSON shape (docs/API.md "Errors"). */

export const ERROR_STATUS = {
  malformed_json: 400,
  bad_request: 400,
  invalid_query: 400,
  unauthenticated: 401,
  forbidden: 403,
  verify_scope_required: 403,
  not_operation_owner: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  /** The operation is claimed by another reviewer (details.holder): take it over first. */
  claimed_by_other: 409,
  too_large: 413,
  unsupported_media_type: 415,
  invalid_record: 422,
  invalid_request: 422,
  observed_in_future: 422,
  too_many_reads: 422,
  rate_limited: 429,
  overloaded: 429,
  busy: 429,
  internal: 500,
  unavailable: 503,
  /** The database's disk is full: nothing was stored; it is taken again once space is freed. */
  storage_full: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  readonly status: number;
  /** Seconds to wait before trying again: sent as `Retry-After` (429s, 503s). */
  retryAfter?: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
  toJSON() {
    return { error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } };
  }
}

export function errorBody(code: ErrorCode, message: string, details?: unknown) {
  return new ApiError(code, message, details).toJSON();
}

/**
 * A value a schema refused, as the API answers it: `message` in sentences naming each field and
 * what it accepts (lib/domain/refusal.ts), `details` the schema's own issues.
 */
export function invalid(code: "invalid_request" | "invalid_query" | "invalid_record", error: z.ZodError, opts: RefusalOptions): ApiError {
  const { message, details } = describeRefusal(error, opts);
  return new ApiError(code, message, details);
}

/** The value as the schema reads it, or the refusal `invalid` answers (a query: 400 `invalid_query`, naming parameters). */
export function validated<T>(schema: z.ZodType<T>, input: unknown, as: "request" | "query" | "record" = "request"): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const code = as === "query" ? "invalid_query" : as === "record" ? "invalid_record" : "invalid_request";
  throw invalid(code, parsed.error, { input, schema, root: as, key: as === "query" ? "parameter" : "field" });
}

/** A refusal of the domain's trust rules (lib/domain/trust.ts) as the API answers it. */
export function refusalError(r: { code: "forbidden" | "verify_scope_required" | "not_operation_owner" | "observed_in_future" | "too_many_reads"; message: string; details?: unknown }): ApiError {
  return new ApiError(r.code, r.message, r.details);
}

/** How the API answers each of the store's refusals (lib/store/errors.ts). */
const STORE_ERROR_CODE: Record<StoreErrorKind, ErrorCode> = {
  invalid_input: "invalid_request",
  not_found: "not_found",
  conflict: "conflict",
  claimed_by_other: "claimed_by_other",
  forbidden: "forbidden",
  overloaded: "overloaded",
  unavailable: "unavailable",
  internal: "internal",
  verify_scope_required: "verify_scope_required",
  not_operation_owner: "not_operation_owner",
  observed_in_future: "observed_in_future",
  too_many_reads: "too_many_reads",
};

/**
 * An error as the API answers it when it is one it knows: an ApiError as itself, a StoreError
 * mapped to its code (message and details kept, Retry-After from the store's wait), the
 * database's disk full as 507 `storage_full`, the database unreachable or not answering in time
 * as 503 `unavailable`, both with Retry-After; null for
 * anything else (a bug). Route handlers, server actions and the CLI all go through this.
 */
export function knownError(e: unknown): ApiError | null {
  if (e instanceof ApiError) return e;
  if (e instanceof StoreError) return storeErrorAnswer(e);
  if (isStorageFull(e)) {
    const full = new ApiError("storage_full", "the database's disk is full: nothing of this request was stored. It is taken again once an operator frees space; try again later");
    full.retryAfter = STORAGE_FULL_RETRY_SECONDS;
    return full;
  }
  if (isDatabaseUnavailable(e)) return databaseUnavailable();
  return null;
}

/** How long a client is asked to wait when the disk is full (freeing space takes a person). */
const STORAGE_FULL_RETRY_SECONDS = 30;

/** The answer when the database could not be reached or did not answer in time (lib/store/db/unavailable.ts). */
export function databaseUnavailable(): ApiError {
  const error = new ApiError("unavailable", "the database did not answer in time or could not be reached; nothing of this request is known to be stored: send it again after Retry-After seconds (ingest is idempotent)");
  error.retryAfter = UNAVAILABLE_RETRY_AFTER_SECONDS;
  return error;
}

/** A StoreError as the API answers it: its kind's code, its message and details, its wait as Retry-After. */
export function storeErrorAnswer(e: StoreError): ApiError {
  const error = new ApiError(STORE_ERROR_CODE[e.kind], e.message, e.details);
  if (e.retryAfterSeconds !== undefined) error.retryAfter = e.retryAfterSeconds;
  return error;
}

/** The answer to a request with no credentials, or with ones that are not valid. */
/**
 * 401. `authorization`: the request's Authorization header, when it had one: a caller that sent a
 * bearer token is told that token was not accepted, rather than asked to send one.
 */
export function unauthenticated(authorization?: string | null): ApiError {
  if (authorization && /^bearer\s+\S/i.test(authorization)) {
    return new ApiError("unauthenticated", "the bearer token is unknown, expired or revoked: create a new one under Settings, Tokens");
  }
  return new ApiError("unauthenticated", "sign in, or send Authorization: Bearer <token>");
}

/**
 * Any error as the API answers it: a known one (knownError) as itself (a 401 with its Bearer
 * challenge), anything else as a logged 500 that leaks nothing. Route handlers and the ingest fast path
 * (ingest-node.ts) both answer through this. Under the production server every answer carries
 * the request's id (`request_id`, also the `x-request-id` header), so a person can hand it to
 * whoever reads the logs.
 */
export function errorAnswer(e: unknown): { status: number; body: ErrorBody; headers: Record<string, string> } {
  let error = knownError(e);
  const request = currentRequest();
  if (!error) {
    log().error({ request_id: request?.id, err: e }, "unhandled error in an API route");
    error = new ApiError("internal", "something went wrong on our side; it has been logged");
  }
  if (error.code === "overloaded") metrics().ingestOverloaded.inc();
  const headers: Record<string, string> = {};
  if (error.status === 401) headers["www-authenticate"] = 'Bearer realm="reconcile"';
  if (error.retryAfter !== undefined) headers["retry-after"] = String(error.retryAfter);
  return { status: error.status, body: withRequestId(error.toJSON()), headers };
}

type ErrorBody = ReturnType<ApiError["toJSON"]> & { error: { request_id?: string } };

/** An error body with the current request's id in it (unchanged outside a request). */
export function withRequestId<B extends { error: object }>(body: B): B & { error: { request_id?: string } } {
  const id = currentRequest()?.id;
  return id ? { ...body, error: { ...body.error, request_id: id } } : body;
}
