/**
 * The Reconcile client: `new Reconcile({ url, token })`. It needs only `fetch`, so it runs on
 * Node 20+ and on edge runtimes. Unless `strict: true`, nothing it does throws into the agent
 * because Reconcile is unreachable: records wait in a bounded queue and are counted.
 */
import { readApproval, takeApproval } from "./approval.js";
import { operationIdProblem, operationPath } from "./operation-id.js";
import { backoffDelay, DEFAULT_BACKOFF, parseRetryAfter, type BackoffOptions } from "./backoff.js";
import { ReconcileRejectedError, ReconcileUnavailableError } from "./errors.js";
import { guardFunction, type GuardCall, type GuardCore, type GuardOptions } from "./guard.js";
import { closedGate, errorOf, gateFromOperation, isRetryableStatus } from "./response.js";
import { MAX_BATCH_RECORDS, MAX_REQUEST_BYTES, messageOf, race, Sender } from "./sender.js";
import type { ApprovalAnswer, AttemptFields, CanonicalReadFields, ClientEvent, ClientStats, Named, OperationRead, OperationRecord, RetryGate } from "./types.js";

export type ReconcileOptions = {
  /** The server's base URL, e.g. "https://reconcile.example.com". */
  url: string;
  /** An API token: scope `ingest` to record, `verify` for canonical reads, `read` for mayRetry. */
  token: string;
  /**
   * Fail loudly instead of degrading (default false): a guard does not call the tool unless its
   * intent was stored in time; record(), flush(), close() and mayRetry() reject when Reconcile
   * cannot be reached. A receipt for a call that already happened never throws.
   */
  strict?: boolean;
  /** Sent with every intent. */
  agent?: Named;
  trajectoryId?: string;
  /** How long a guard waits for its intent to be stored before calling the tool (default 2,000 ms). Not at all while Reconcile is failing, unless strict. */
  intentTimeoutMs?: number;
  /** Bounds on what waits in memory (defaults 10,000 records and 16 MiB). */
  maxQueueRecords?: number;
  maxQueueBytes?: number;
  /** How long guard() and record() wait for room in a full queue before the record is dropped and counted (default 5,000 ms). */
  backpressureTimeoutMs?: number;
  /** Per request (defaults 100 records, 1 MiB; the server takes at most 500 and 4 MiB). */
  maxBatchRecords?: number;
  maxBatchBytes?: number;
  /** How long records gather before a request (default 200 ms); an intent goes at once. */
  flushIntervalMs?: number;
  /** A request without an answer in this time failed (default 10,000 ms). */
  requestTimeoutMs?: number;
  backoff?: BackoffOptions;
  /** How many operation ids the client remembers having called, to recognise retries (default 10,000). */
  maxKnownOperations?: number;
  /** Records refused or dropped, and requests being retried. Default: a console.warn for the first two. */
  onEvent?: (event: ClientEvent) => void;
  /** Another fetch (a runtime's, or one with a proxy). */
  fetch?: typeof fetch;
  /**
   * Keep records whose request Reconcile refused as a whole with 401 or 403 (a revoked token, a
   * scope taken away) and send them again with backoff, instead of refusing them for good
   * (default false). For a recorder with a durable journal (the MCP gateway): a new token, or the
   * old one restored, delivers them.
   */
  retryAuthFailures?: boolean;
};

const DEFAULTS = {
  intentTimeoutMs: 2_000,
  maxQueueRecords: 10_000,
  maxQueueBytes: 16 * 1024 * 1024,
  backpressureTimeoutMs: 5_000,
  maxBatchRecords: 100,
  maxBatchBytes: 1024 * 1024,
  flushIntervalMs: 200,
  requestTimeoutMs: 10_000,
  maxKnownOperations: 10_000,
  retryAuthFailures: false,
};

function warnOnLoss(event: ClientEvent) {
  if (event.kind === "rejected") console.warn(`reconcile: record for ${event.operation_id} refused (${event.status} ${event.code}): ${event.message}`);
  if (event.kind === "dropped") console.warn(`reconcile: record for ${event.operation_id} dropped (${event.reason})`);
}

/** A set that forgets its oldest members past a bound. */
class RecentSet {
  private readonly ids = new Set<string>();
  constructor(private readonly max: number) {}
  has(id: string) {
    return this.ids.has(id);
  }
  add(id: string) {
    this.ids.delete(id);
    this.ids.add(id);
    if (this.ids.size > this.max) this.ids.delete(this.ids.values().next().value!);
  }
  delete(id: string) {
    this.ids.delete(id);
  }
}

function positive(name: string, value: number | undefined, fallback: number, max = Infinity): number {
  const v = value ?? fallback;
  if (typeof v !== "number" || !(v > 0)) throw new RangeError(`Reconcile: ${name} must be a positive number`);
  return Math.min(v, max);
}

/** A read without `observed_at`, stamped with this time. */
const stamped = (read: CanonicalReadFields, at: string): CanonicalReadFields => (read.observed_at ? read : { ...read, observed_at: at });

export class Reconcile {
  readonly strict: boolean;
  private readonly url: string;
  private readonly token: string;
  private readonly fetch: typeof fetch;
  private readonly o: typeof DEFAULTS & { backoff: BackoffOptions; onEvent: (e: ClientEvent) => void };
  private readonly sender: Sender;
  private readonly core: GuardCore;
  /** Attempt records on their way (recordAttempt): flush() and close() wait for them. */
  private readonly attempting = new Set<Promise<boolean>>();

  constructor(options: ReconcileOptions) {
    if (typeof options?.url !== "string" || !/^https?:\/\//.test(options.url)) throw new TypeError("Reconcile: url must be an http(s) URL");
    if (typeof options.token !== "string" || !options.token) throw new TypeError("Reconcile: token is required");
    this.url = options.url.replace(/\/+$/, "");
    this.token = options.token;
    this.strict = options.strict === true;
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.o = {
      intentTimeoutMs: positive("intentTimeoutMs", options.intentTimeoutMs, DEFAULTS.intentTimeoutMs),
      maxQueueRecords: positive("maxQueueRecords", options.maxQueueRecords, DEFAULTS.maxQueueRecords),
      maxQueueBytes: positive("maxQueueBytes", options.maxQueueBytes, DEFAULTS.maxQueueBytes),
      backpressureTimeoutMs: options.backpressureTimeoutMs ?? DEFAULTS.backpressureTimeoutMs,
      maxBatchRecords: positive("maxBatchRecords", options.maxBatchRecords, DEFAULTS.maxBatchRecords, MAX_BATCH_RECORDS),
      maxBatchBytes: positive("maxBatchBytes", options.maxBatchBytes, DEFAULTS.maxBatchBytes, MAX_REQUEST_BYTES - 1024),
      flushIntervalMs: positive("flushIntervalMs", options.flushIntervalMs, DEFAULTS.flushIntervalMs),
      requestTimeoutMs: positive("requestTimeoutMs", options.requestTimeoutMs, DEFAULTS.requestTimeoutMs),
      maxKnownOperations: positive("maxKnownOperations", options.maxKnownOperations, DEFAULTS.maxKnownOperations),
      retryAuthFailures: options.retryAuthFailures === true,
      backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
      onEvent: options.onEvent ?? warnOnLoss,
    };
    this.sender = new Sender({ url: this.url, token: this.token, fetch: this.fetch, ...this.o });
    this.core = {
      envelope: { ...(options.agent ? { agent: options.agent } : {}), ...(options.trajectoryId ? { trajectory_id: options.trajectoryId } : {}) },
      calls: new RecentSet(this.o.maxKnownOperations),
      mayRetry: (id) => this.mayRetry(id),
      recordIntent: (record) => this.recordIntent(record),
      recordAfter: async (record) => void (await this.sender.enqueue(record, { urgent: false, waitMs: this.o.backpressureTimeoutMs })),
      newId: () => globalThis.crypto.randomUUID(),
    };
  }

  /**
   * Wraps a tool function: each call of the result is one operation. The intent is recorded
   * before `fn` runs; then an accepted receipt when `fn` returns, a rejected one when it throws a
   * definite refusal (ToolRefusal, or what `isRefusal` recognises), none when it throws anything
   * else (its fate is unknown); then the canonical read when `verify` is given. The result or
   * error of `fn` is passed on unchanged. Calling it again with an operation id it already ran
   * throws RetryBlockedError unless the server's retry decision allows it.
   */
  guard<I, R, X = unknown>(toolName: string, fn: (input: I, call: GuardCall<X>) => R | Promise<R>, options: GuardOptions<I, Awaited<R>, X>): (input: I, extra?: X) => Promise<Awaited<R>> {
    return guardFunction(this.core, toolName, fn, options);
  }

  /**
   * Queues any operation record (a later canonical read, side effects, a claimed outcome…).
   * A receipt or canonical read without `observed_at` gets the current time. Resolves once it is
   * queued, not delivered (see flush()); a record that finds no room in time is dropped and
   * counted, or, when strict, rejects with ReconcileUnavailableError.
   */
  async record(record: OperationRecord): Promise<void> {
    if (typeof record?.operation_id !== "string" || !record.operation_id) throw new TypeError("record(record): operation_id is required");
    checkId(record.operation_id, "record(record)");
    const at = new Date().toISOString();
    const copy: OperationRecord = { ...record };
    if (record.receipt && !record.receipt.observed_at) copy.receipt = { ...record.receipt, observed_at: at };
    const read = record.canonical_read;
    if (read) copy.canonical_read = Array.isArray(read) ? read.map((r) => stamped(r, at)) : stamped(read, at);
    const pending = await this.sender.enqueue(copy, { urgent: false, waitMs: this.o.backpressureTimeoutMs });
    if (!pending && this.strict) throw new ReconcileUnavailableError(`the record for ${record.operation_id} was not queued: the queue stayed full or the client is closed`);
  }

  /**
   * The server's retry decision for an operation (after sending what is queued for it). `allowed`
   * is true only when the server says an automatic retry is; an idempotency key alone never
   * opens it. When the decision cannot be had, the gate is closed and `reason` says why (or,
   * when strict, this rejects).
   */
  async mayRetry(operationId: string): Promise<RetryGate> {
    const read = await this.readOperation(operationId);
    if (read.kind === "found") return gateFromOperation(read.body);
    if (read.kind === "missing") return closedGate(read.unsent ? "Reconcile has not received this operation yet: its records are still queued" : "Reconcile has no record of this operation");
    if (read.kind === "refused") return closedGate(`Reconcile refused to read the operation (${read.status} ${read.code}): the retry decision is unknown`);
    return closedGate(`Reconcile could not be reached (${read.error}): the retry decision is unknown, so no automatic retry`);
  }

  /**
   * The operation as the server has it now (`GET /api/v1/operations/{id}`), after sending what is
   * queued for it; tried three times with backoff on 429, 5xx and network errors. Missing,
   * refused and unreachable are answers, not exceptions (unless strict).
   */
  async readOperation(operationId: string, opts: { waitMs?: number; signal?: AbortSignal } = {}): Promise<OperationRead> {
    // An id the server cannot hold is never put in a URL: `..` would read another path.
    const problem = operationIdProblem(operationId);
    if (problem) return { kind: "refused", status: 422, code: "invalid_operation_id", message: `operation_id ${problem}; nothing was sent` };
    const unsent = await this.sender.settleOperation(operationId, this.o.intentTimeoutMs);
    // `waitMs`: the server answers once the outcome is decisive, or after that long (a long poll, at most 60 s).
    const waitSeconds = Math.min(60, Math.max(0, Math.round((opts.waitMs ?? 0) / 100) / 10));
    const path = waitSeconds > 0 ? `${operationPath(operationId)}?wait=${waitSeconds}` : operationPath(operationId);
    const timeoutMs = this.o.requestTimeoutMs + waitSeconds * 1000;
    const started = Date.now();
    let lastError = "";
    for (let attempt = 1; attempt <= 3; attempt++) {
      let status: number | null = null;
      let retryAfter: string | null = null;
      let body: unknown = null;
      try {
        ({ status, retryAfter, body } = await this.api("GET", path, { timeoutMs, signal: opts.signal }));
      } catch (e) {
        lastError = messageOf(e);
      }
      if (status === 200) return { kind: "found", body };
      if (status === 404) return { kind: "missing", unsent: unsent > 0 };
      if (status !== null && !isRetryableStatus(status)) {
        const { code, message } = errorOf(status, body);
        this.o.onEvent({ kind: "read_failed", operation_id: operationId, status, error: `${code}: ${message}` });
        if (this.strict) throw new ReconcileRejectedError(status, code, message);
        return { kind: "refused", status, code, message };
      }
      if (status !== null) lastError = `HTTP ${status}`;
      const delay = backoffDelay(attempt, this.o.backoff, parseRetryAfter(retryAfter));
      if (attempt === 3 || opts.signal?.aborted || Date.now() - started + delay > timeoutMs) break;
      await new Promise((r) => setTimeout(r, delay));
    }
    this.o.onEvent({ kind: "read_failed", operation_id: operationId, status: null, error: lastError });
    if (this.strict) throw new ReconcileUnavailableError(`the operation ${operationId} could not be read: ${lastError}`);
    return { kind: "unreachable", error: lastError };
  }

  /**
   * Waits until everything queued now is delivered or refused for good, at most `timeoutMs`
   * (default 30 s); the stats then. When strict, rejects if records are still undelivered.
   */
  /**
   * Records what an agent was told about an operation (`POST /api/v1/operations/{id}/attempts`,
   * docs/API.md "Attempts"): after the operation's own queued records are sent, tried three times
   * with backoff on 404 (not there yet), 429, 5xx and network errors. Resolves to whether it was
   * stored; never throws for Reconcile's answers. flush() and close() wait for those in flight.
   */
  recordAttempt(operationId: string, attempt: AttemptFields): Promise<boolean> {
    checkId(operationId, "recordAttempt");
    const run = (async () => {
      await this.sender.settleOperation(operationId, this.o.intentTimeoutMs);
      for (let n = 1; n <= 3; n++) {
        let status = 0;
        let retryAfter: string | null = null;
        try {
          ({ status, retryAfter } = await this.api("POST", `${operationPath(operationId)}/attempts`, { body: attempt }));
        } catch {
          // unreachable: tried again
        }
        if (status === 201) return true;
        if (status !== 0 && status !== 404 && !isRetryableStatus(status)) break;
        if (n < 3) await new Promise((r) => setTimeout(r, backoffDelay(n, this.o.backoff, parseRetryAfter(retryAfter))));
      }
      this.o.onEvent({ kind: "read_failed", operation_id: operationId, status: null, error: "an attempt record could not be stored" });
      return false;
    })();
    this.attempting.add(run);
    void run.finally(() => this.attempting.delete(run));
    return run;
  }

  async flush(timeoutMs = 30_000): Promise<ClientStats> {
    await race(Promise.allSettled([...this.attempting]), timeoutMs, null);
    const done = await this.sender.flush(timeoutMs);
    if (!done && this.strict) throw new ReconcileUnavailableError(`records still undelivered after ${timeoutMs} ms`);
    return this.stats();
  }

  /** Whether everything queued now was delivered or refused for good within `timeoutMs`: flush() as a yes or no. */
  async settled(timeoutMs = 30_000): Promise<boolean> {
    return this.sender.flush(timeoutMs);
  }

  /**
   * Stops taking records, sends what is queued within `timeoutMs` (default 10 s), and counts
   * whatever is left as dropped. The final stats. When strict, rejects if anything was dropped here.
   */
  async close(timeoutMs = 10_000): Promise<ClientStats> {
    await race(Promise.allSettled([...this.attempting]), timeoutMs, null);
    const before = this.stats().dropped;
    await this.sender.close(timeoutMs);
    const stats = this.stats();
    if (this.strict && stats.dropped > before) throw new ReconcileUnavailableError(`${stats.dropped - before} records were not delivered before close`);
    return stats;
  }

  stats(): ClientStats {
    return this.sender.stats();
  }

  /**
   * Records an intent before a call goes out, as guard() does: sent at once, and awaited (at most
   * `intentTimeoutMs`) while Reconcile answers. With `strict` (default: the client's), rejects
   * unless it was stored in time, so the caller can hold the call; otherwise it only waits.
   */
  async recordIntent(record: OperationRecord, opts: { strict?: boolean } = {}): Promise<void> {
    const strict = opts.strict ?? this.strict;
    checkId(record?.operation_id, "recordIntent(record)");
    const pending = await this.sender.enqueue(record, { urgent: true, waitMs: this.o.backpressureTimeoutMs });
    if (!strict) {
      // Sent and awaited while Reconcile answers; merely queued, in order, while it does not.
      if (pending && this.sender.healthy) await race(Promise.race([pending.settled, pending.attemptFailed]), this.o.intentTimeoutMs, null);
      return;
    }
    if (!pending) throw new ReconcileUnavailableError(`the intent for ${record.operation_id} was not queued: the queue stayed full, or the client is closed`);
    const outcome = await race(pending.settled, this.o.intentTimeoutMs, null);
    if (outcome === "delivered") return;
    if (outcome === "rejected" && pending.rejection) {
      const r = pending.rejection;
      throw new ReconcileRejectedError(r.status, r.code, r.message);
    }
    this.sender.withdraw(pending); // unsent: it never will be; in flight: it may still arrive
    throw new ReconcileUnavailableError(`the intent for ${record.operation_id} was not stored within ${this.o.intentTimeoutMs} ms`);
  }

  /**
   * A held call's approval (`GET /api/v1/operations/{id}/approval`, scope `read`): with
   * `waitSeconds` (0–30) the server answers once it is no longer pending, or after that long.
   * Found, refused (the server's answer: 404 not held, 4xx, 429, 5xx) or unreachable; never throws.
   */
  approval(operationId: string, opts: { waitSeconds?: number; signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ApprovalAnswer> {
    return readApproval((m, p, o) => this.api(m, p, o), operationId, opts);
  }

  /**
   * Takes an approved call to forward it (`POST /api/v1/operations/{id}/approval/use`, scope
   * `ingest`): found means this caller took it (once, across gateways); refused says why not
   * (409: already taken, other arguments, not approved). Never throws.
   */
  useApproval(operationId: string, take: { params_digest: string; rule_version?: string }, opts: { signal?: AbortSignal } = {}): Promise<ApprovalAnswer> {
    return takeApproval((m, p, o) => this.api(m, p, o), operationId, take, opts);
  }

  /**
   * One authenticated request to Reconcile's API, for what has no method of its own: the status,
   * `Retry-After` and JSON body (null when not JSON). Network errors and timeouts (default
   * `requestTimeoutMs`) throw; nothing is retried here.
   */
  async api(method: "GET" | "POST", path: string, opts: { body?: unknown; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<{ status: number; retryAfter: string | null; body: unknown }> {
    const timeoutMs = opts.timeoutMs ?? this.o.requestTimeoutMs;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const onAbort = () => abort.abort(opts.signal?.reason);
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
      if (opts.body !== undefined) headers["content-type"] = "application/json";
      const res = await this.fetch(this.url + path, { method, headers, signal: abort.signal, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
      const text = await res.text();
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: errorOf() names the status instead
      }
      return { status: res.status, retryAfter: res.headers.get("retry-after"), body };
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
    }
  }
}

/** A record whose id the server cannot hold is refused here, before it is queued (it would be refused there, and lost). */
function checkId(id: unknown, where: string): void {
  if (typeof id !== "string") throw new TypeError(`${where}: operation_id is required`);
  const problem = operationIdProblem(id);
  if (problem) throw new TypeError(`${where}: operation_id ${problem}`);
}
