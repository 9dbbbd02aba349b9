/**
 * What the server's answers mean for the client (pure: no I/O). Only 429, 5xx and network errors
 * are worth sending again; any other 4xx is a refusal that sending again would not change.
 */
import { parseRetryAfter } from "./backoff.js";
import type { RetryGate } from "./types.js";

export type ItemOutcome = { kind: "delivered" } | { kind: "retry" } | { kind: "rejected"; status: number; code: string; message: string };

export type BatchVerdict =
  | { kind: "retry"; status: number | null; error: string; retryAfterMs: number | null }
  | { kind: "split" }
  | { kind: "items"; items: ItemOutcome[] };

export const isRetryableStatus = (status: number) => status === 429 || status >= 500;

/** The `{"error": {"code", "message"}}` of an answer, or a stand-in when the body is something else. */
export function errorOf(status: number, body: unknown): { code: string; message: string } {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return {
    code: typeof error?.code === "string" ? error.code : `http_${status}`,
    message: typeof error?.message === "string" ? error.message : `HTTP ${status}`,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The answer to `POST /api/v1/receipts` with `{"records": [...]}` of `count` records. */
/**
 * `retryAuthFailures`: a whole request refused 401 or 403 is the token's problem (revoked, a scope
 * taken away), not the records': tried again with backoff, like a 5xx, until a new token is set.
 */
export function classifyBatch(status: number, retryAfter: string | null, text: string, count: number, now = Date.now(), opts: { retryAuthFailures?: boolean } = {}): BatchVerdict {
  const body = parseJson(text);
  if (isRetryableStatus(status) || (opts.retryAuthFailures && (status === 401 || status === 403))) {
    const { code, message } = errorOf(status, body);
    return { kind: "retry", status, error: `${code}: ${message}`, retryAfterMs: parseRetryAfter(retryAfter, now) };
  }
  if (status === 413 && count > 1) return { kind: "split" };
  if (status !== 200 && status !== 207) {
    const { code, message } = errorOf(status, body);
    return { kind: "items", items: Array.from({ length: count }, () => ({ kind: "rejected" as const, status, code, message })) };
  }
  const results = (body as { results?: unknown } | undefined)?.results;
  if (!Array.isArray(results) || results.length !== count) {
    // Not the server's answer (a proxy's page?): nothing says the records were stored.
    return { kind: "retry", status, error: `an answer without one result per record (HTTP ${status})`, retryAfterMs: null };
  }
  const items: ItemOutcome[] = Array.from({ length: count }, () => ({ kind: "retry" as const }));
  for (const r of results as { index?: unknown; status?: unknown }[]) {
    if (typeof r?.index !== "number" || typeof r.status !== "number" || r.index < 0 || r.index >= count) continue;
    if (r.status >= 200 && r.status < 300) items[r.index] = { kind: "delivered" };
    else if (isRetryableStatus(r.status)) items[r.index] = { kind: "retry" };
    else items[r.index] = { kind: "rejected", status: r.status, ...errorOf(r.status, r) };
  }
  return { kind: "items", items };
}

type OperationBody = {
  effective_outcome?: unknown;
  idempotency?: { key?: unknown } | null;
  retry?: { automatic?: unknown; safe_replay_available?: unknown; decision?: unknown };
};

/**
 * The retry gate from `GET /api/v1/operations/{id}`'s answer. Only the server's `automatic`
 * opens it: an idempotency key, even an enforced one with a safe replay available, never does.
 */
export function gateFromOperation(body: unknown): RetryGate {
  const op = (body ?? {}) as OperationBody;
  const retry = op.retry ?? {};
  const key = typeof op.idempotency?.key === "string" && op.idempotency.key ? op.idempotency.key : undefined;
  return {
    allowed: retry.automatic === true,
    reason: typeof retry.decision === "string" ? retry.decision : "the server gave no retry decision",
    safe_replay_available: retry.safe_replay_available === true,
    ...(key ? { key } : {}),
    ...(typeof op.effective_outcome === "string" ? { outcome: op.effective_outcome } : {}),
  };
}

/** A closed gate for when the server's decision could not be had. */
export const closedGate = (reason: string): RetryGate => ({ allowed: false, reason, safe_replay_available: false });
