/**
 * guard(): one tool call as one operation. The intent is recorded before the tool is called, the
 * receipt after (accepted, or rejected for a definite refusal), nothing when the call's fate is
 * unknown, and the canonical read when the caller can make one.
 */
import { RetryBlockedError, ToolRefusal } from "./errors.js";
import type { CanonicalReadFields, IntentFields, OperationRecord, ReceiptExtras, ReceiptFields, RetryGate } from "./types.js";

/** What the guarded tool function receives besides its input. */
export type GuardCall<X = unknown> = {
  /** This logical call's operation: the same across the caller's own retries when `operationId` gives it. */
  operationId: string;
  /** Pass it to the tool so that the tool can enforce it: the `idempotency.key` (default: the operation id). */
  idempotencyKey: string;
  /** Whatever the caller passed as the guarded function's second argument (e.g. an AI SDK tool's options). */
  extra: X | undefined;
};

export type GuardOptions<I, R, X = unknown> = {
  /** The intent, from the call's input: what the call is meant to do. Recorded before the call. */
  intent: (input: I) => IntentFields;
  /**
   * An independent read-back of the resource that owns the effect, after an accepted call
   * (needs a token with the `verify` scope). A read that throws is recorded as `unavailable`.
   */
  verify?: (input: I, result: R, call: GuardCall<X>) => CanonicalReadFields | CanonicalReadFields[] | Promise<CanonicalReadFields | CanonicalReadFields[]>;
  /**
   * The operation id of this logical call. Give one that stays the same when the caller retries
   * the same call (a request id, a job id): the guard then asks the server before running it
   * again. Default: a new random id per call.
   */
  operationId?: (input: I, extra: X | undefined) => string | undefined;
  /**
   * Say that the tool enforces an idempotency key (the call's `idempotencyKey`, by default the
   * operation id): recorded as the operation's `idempotency`. It makes a *reviewed* replay
   * available; it never allows an automatic retry.
   */
  idempotency?: { enforced: boolean; key?: (input: I, operationId: string) => string };
  /** More for the accepted receipt, from the result: `receipt_id`, `raw`, `params`, `environment`, `partial`, … */
  receipt?: (result: R, input: I) => ReceiptExtras;
  /** Which errors are definite refusals (besides ToolRefusal): a `rejected` receipt is recorded for them. */
  isRefusal?: (error: unknown) => boolean;
};

/** What guard() needs from the client. */
export type GuardCore = {
  envelope: Pick<OperationRecord, "agent" | "trajectory_id">;
  /** Operation ids whose tool this client already called (bounded). */
  calls: { has(id: string): boolean; add(id: string): void; delete(id: string): void };
  mayRetry(operationId: string): Promise<RetryGate>;
  /** Records the intent before the call; throws only in strict mode (and then the tool is not called). */
  recordIntent(record: OperationRecord): Promise<void>;
  /** Queues a record after the call; never throws. */
  recordAfter(record: OperationRecord): Promise<void>;
  newId(): string;
};

const now = () => new Date().toISOString();
const describe = (e: unknown) => (e instanceof Error ? { name: e.name, message: e.message } : { message: String(e) });

function refusalReceipt(error: unknown): ReceiptFields {
  if (error instanceof ToolRefusal) {
    return { status: "rejected", observed_at: now(), ...(error.receiptId ? { receipt_id: error.receiptId } : {}), raw: error.raw ?? { error: describe(error) } };
  }
  return { status: "rejected", observed_at: now(), raw: { error: describe(error) } };
}

function withTime(read: CanonicalReadFields): CanonicalReadFields {
  return read.observed_at ? read : { ...read, observed_at: now() };
}

export function guardFunction<I, R, X>(
  core: GuardCore,
  toolName: string,
  fn: (input: I, call: GuardCall<X>) => R | Promise<R>,
  options: GuardOptions<I, Awaited<R>, X>,
): (input: I, extra?: X) => Promise<Awaited<R>> {
  if (typeof toolName !== "string" || !toolName) throw new TypeError("guard(toolName, fn, options): toolName must be a non-empty string");
  if (typeof fn !== "function") throw new TypeError("guard(toolName, fn, options): fn must be a function");
  if (typeof options?.intent !== "function") throw new TypeError("guard(toolName, fn, options): options.intent must be a function");
  const isRefusal = (e: unknown) => e instanceof ToolRefusal || (options.isRefusal?.(e) ?? false);

  return async (input: I, extra?: X): Promise<Awaited<R>> => {
    const operationId = options.operationId?.(input, extra) || core.newId();
    const intent = options.intent(input);
    const idempotencyKey = options.idempotency?.key?.(input, operationId) ?? operationId;
    if (core.calls.has(operationId)) {
      // The caller's retry of a call that already went out: only the server's decision may allow it.
      const gate = await core.mayRetry(operationId);
      if (!gate.allowed) throw new RetryBlockedError(operationId, gate);
    }
    core.calls.add(operationId);
    const record: OperationRecord = {
      operation_id: operationId,
      ...core.envelope,
      tool: { name: toolName },
      intent,
      ...(options.idempotency ? { idempotency: { enforced: options.idempotency.enforced, key: idempotencyKey } } : {}),
    };
    try {
      await core.recordIntent(record);
    } catch (e) {
      core.calls.delete(operationId); // the tool was not called: running it later is no retry
      throw e;
    }
    const call: GuardCall<X> = { operationId, idempotencyKey, extra };
    let result: Awaited<R>;
    try {
      result = await fn(input, call);
    } catch (error) {
      // A definite refusal is a receipt; any other error (a timeout, a dropped connection) leaves the fate unknown.
      if (isRefusal(error)) await core.recordAfter({ operation_id: operationId, receipt: refusalReceipt(error) });
      throw error;
    }
    const observedAt = now();
    let extras: ReceiptExtras = {};
    try {
      extras = options.receipt?.(result, input) ?? {};
    } catch {
      // The call succeeded: a failing receipt hook costs the extras, never the receipt.
    }
    await core.recordAfter({ operation_id: operationId, receipt: { ...extras, status: "accepted", observed_at: observedAt } });
    if (options.verify) {
      let read: CanonicalReadFields | CanonicalReadFields[];
      try {
        const got = await options.verify(input, result, call);
        read = Array.isArray(got) ? got.map(withTime) : withTime(got);
      } catch (e) {
        read = { status: "unavailable", observed_at: now(), evidence: `the read-back failed: ${describe(e).message}` };
      }
      await core.recordAfter({ operation_id: operationId, canonical_read: read });
    }
    return result;
  };
}
