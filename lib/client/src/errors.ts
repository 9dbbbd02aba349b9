/**
 * The errors this client throws. Apart from a caller's own mistakes (a TypeError), the agent only
 * ever sees RetryBlockedError, its own tool's errors, and, with `strict: true`, the two
 * Reconcile errors below.
 */
import type { RetryGate } from "./types.js";

/**
 * Throw this (or an error `isRefusal` recognises) from a guarded function to say the tool's
 * boundary definitely refused the call: nothing was done. The guard then records a `rejected`
 * receipt. Any other error leaves the call's fate unknown, and no receipt is recorded.
 */
export class ToolRefusal extends Error {
  override readonly name = "ToolRefusal";
  /** The boundary's id for the refusal, if it gave one (recorded as `receipt_id`). */
  readonly receiptId?: string;
  /** Anything worth keeping about the refusal (recorded as the receipt's `raw`). */
  readonly raw?: unknown;
  constructor(message: string, options: { cause?: unknown; receiptId?: string; raw?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.receiptId = options.receiptId;
    this.raw = options.raw;
  }
}

/**
 * The guarded function was called again for an operation it already ran, and the server's retry
 * decision does not allow an automatic retry (an idempotency key alone never does). The tool was
 * not called.
 */
export class RetryBlockedError extends Error {
  override readonly name = "RetryBlockedError";
  constructor(
    readonly operationId: string,
    readonly gate: RetryGate,
  ) {
    super(`retry of operation ${operationId} blocked: ${gate.reason}`);
  }
}

/** `strict: true` only: Reconcile could not be reached in time (the tool was not called when this comes from a guard). */
export class ReconcileUnavailableError extends Error {
  override readonly name = "ReconcileUnavailableError";
}

/** `strict: true` only: the server refused a record or a read for good (a 4xx other than 429). */
export class ReconcileRejectedError extends Error {
  override readonly name = "ReconcileRejectedError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`Reconcile refused (${status} ${code}): ${message}`);
  }
}
