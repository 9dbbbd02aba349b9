/**
 * Sends records in the background: batched `POST /api/v1/receipts` requests, one at a time and in
 * order, out of a bounded queue. Only 429, 5xx and network errors are tried again (with backoff,
 * never sooner than Retry-After); a record the server refuses for good is counted and reported.
 * Every record ends delivered, rejected or dropped, and is counted as such.
 */
import { backoffDelay, type BackoffOptions } from "./backoff.js";
import { BoundedQueue, type Entry } from "./queue.js";
import { classifyBatch, type BatchVerdict } from "./response.js";
import type { ClientEvent, ClientStats } from "./types.js";

/** Timers must not keep a Node process alive on their own; other runtimes have no unref. */
function unref(timer: unknown): void {
  const t = timer as { unref?: () => void } | null;
  if (t && typeof t.unref === "function") t.unref();
}

/** The server's limits (docs/API.md "Ingest"). */
export const MAX_RECORD_BYTES = 1024 * 1024;
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
export const MAX_BATCH_RECORDS = 500;

export type Outcome = "delivered" | "rejected" | "dropped";

export type SenderOptions = {
  url: string;
  token: string;
  fetch: typeof fetch;
  maxQueueRecords: number;
  maxQueueBytes: number;
  maxBatchRecords: number;
  maxBatchBytes: number;
  flushIntervalMs: number;
  requestTimeoutMs: number;
  backoff: BackoffOptions;
  onEvent: (event: ClientEvent) => void;
  /** A request refused 401/403 as a whole is tried again (the token may be replaced) instead of refusing its records. */
  retryAuthFailures: boolean;
};

/** One record on its way, with promises the guard can wait on. */
export class Pending {
  entry: Entry<Pending> | null = null;
  rejection: { status: number; code: string; message: string } | null = null;
  readonly settled: Promise<Outcome>;
  /** Resolves the first time a request carrying this record fails and will be tried again. */
  readonly attemptFailed: Promise<void>;
  private settle!: (o: Outcome) => void;
  private failAttempt!: () => void;
  outcome: Outcome | null = null;
  /** Withdrawn while in flight: not to be sent again if this request fails. */
  withdrawn = false;
  constructor(
    readonly operationId: string,
    readonly body: string,
  ) {
    this.settled = new Promise((r) => (this.settle = r));
    this.attemptFailed = new Promise((r) => (this.failAttempt = r));
  }
  finish(o: Outcome) {
    if (this.outcome) return;
    this.outcome = o;
    this.settle(o);
  }
  failed() {
    this.failAttempt();
  }
}

const encoder = new TextEncoder();
export const byteLength = (s: string) => encoder.encode(s).length;
/** An error in a line: fetch's "fetch failed" says why only in its cause (ECONNREFUSED, …). */
export function messageOf(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause as { code?: unknown; message?: unknown } | undefined;
  const why = typeof cause?.code === "string" ? cause.code : typeof cause?.message === "string" ? cause.message : "";
  return `${e.name}: ${e.message}${why ? ` (${why})` : ""}`;
}

export class Sender {
  private readonly queue: BoundedQueue<Pending>;
  private counters = { delivered: 0, rejected: 0, dropped: 0, retries: 0 };
  private failures = 0;
  private nextAttemptAt = 0;
  private pumping: Promise<void> | null = null;
  private linger: ReturnType<typeof setTimeout> | null = null;
  private wake: (() => void) | null = null;
  private batchCap: number;
  private closed = false;
  private stopped = false;

  constructor(private readonly o: SenderOptions) {
    this.queue = new BoundedQueue(o.maxQueueRecords, o.maxQueueBytes);
    this.batchCap = o.maxBatchRecords;
  }

  /** False while requests are failing (between a failed attempt and the next success). */
  get healthy(): boolean {
    return this.failures === 0;
  }

  stats(): ClientStats {
    return {
      queued: this.queue.length,
      queued_bytes: this.queue.bytes,
      peak_queued: this.queue.peakItems,
      peak_queued_bytes: this.queue.peakBytes,
      ...this.counters,
    };
  }

  /**
   * Queues a record, waiting up to `waitMs` for room. Null when it was dropped (counted and
   * reported): the queue stayed full, the record is too large, or the client is closed.
   */
  async enqueue(record: { operation_id: string }, opts: { urgent: boolean; waitMs: number }): Promise<Pending | null> {
    const body = JSON.stringify(record);
    const pending = new Pending(record.operation_id, body);
    const bytes = byteLength(body);
    if (this.closed) return this.drop(pending, "closed");
    if (bytes > Math.min(MAX_RECORD_BYTES, this.o.maxBatchBytes) || !this.queue.canEverHold(bytes)) return this.drop(pending, "too_large");
    const entry = await this.queue.push(pending, bytes, opts.waitMs);
    if (!entry) return this.drop(pending, this.closed ? "closed" : "queue_full");
    pending.entry = entry;
    this.schedule(opts.urgent);
    return pending;
  }

  /**
   * Takes a record back (a strict guard that gave up on its intent): dropped now if unsent; if a
   * request is carrying it, it is not sent again should that request fail (it may still arrive).
   */
  withdraw(pending: Pending): void {
    if (!pending.entry || pending.outcome) return;
    if (pending.entry.inFlight) pending.withdrawn = true;
    else if (this.queue.remove(pending.entry)) this.drop(pending, "withdrawn");
  }

  /** Waits until the records queued now are settled, or the time is up; true when they all are. */
  async flush(timeoutMs: number): Promise<boolean> {
    const waiting = this.queued().map((p) => p.settled);
    if (!waiting.length) return true;
    if (this.linger) this.pumpNow();
    return race(Promise.all(waiting).then(() => true), timeoutMs, false);
  }

  /** Waits (bounded) until this operation's queued records are settled. */
  async settleOperation(operationId: string, timeoutMs: number): Promise<number> {
    const mine = this.queued().filter((p) => p.operationId === operationId);
    if (mine.length && this.linger) this.pumpNow();
    if (mine.length) await race(Promise.all(mine.map((p) => p.settled)), timeoutMs, null);
    return mine.filter((p) => !p.outcome).length;
  }

  /** Takes no more records, sends what it can within the time, then drops (and counts) the rest. */
  async close(timeoutMs: number): Promise<void> {
    this.closed = true;
    await this.flush(timeoutMs);
    this.stopped = true;
    if (this.linger) clearTimeout(this.linger);
    this.wake?.();
    await this.pumping; // a request in flight ends (within requestTimeoutMs) before the rest is counted
    for (const p of this.queue.drain()) this.drop(p, "closed");
  }

  private queued(): Pending[] {
    return this.queue.items();
  }

  private drop(pending: Pending, reason: "queue_full" | "too_large" | "closed" | "withdrawn"): null {
    this.counters.dropped++;
    pending.finish("dropped");
    this.emit({ kind: "dropped", operation_id: pending.operationId, reason });
    return null;
  }

  private emit(event: ClientEvent) {
    try {
      this.o.onEvent(event);
    } catch {
      // A listener's mistake must not stop delivery.
    }
  }

  private schedule(urgent: boolean) {
    if (this.pumping) return; // the running pump takes the new record in its next request
    if (urgent || this.queue.length >= this.batchCap) this.pumpNow();
    else if (!this.linger) {
      this.linger = setTimeout(() => this.pumpNow(), this.o.flushIntervalMs);
    }
  }

  private pumpNow() {
    if (this.linger) clearTimeout(this.linger);
    this.linger = null;
    void this.pump();
  }

  private pump(): Promise<void> {
    if (this.pumping || this.stopped) return this.pumping ?? Promise.resolve();
    this.pumping = this.run().finally(() => {
      this.pumping = null;
      // A record queued while the last request was being answered found the pump still running.
      if (!this.stopped && this.queue.length) this.pumpNow();
    });
    return this.pumping;
  }

  private async run() {
    while (!this.stopped && this.queue.length > 0) {
      const wait = this.nextAttemptAt - Date.now();
      if (wait > 0) await this.sleep(wait);
      if (this.stopped) break;
      const batch = this.queue.take(this.batchCap, Math.min(this.o.maxBatchBytes, MAX_REQUEST_BYTES - 1024));
      if (!batch.length) break;
      await this.send(batch);
    }
  }

  /**
   * Waits, unless close() wakes it first. The only timer that does not keep a Node process alive
   * (an unreachable Reconcile must not hold an agent's process open): whatever awaits the
   * client (flush, close, a guard's intent) holds its own timer, and so keeps it going.
   */
  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      unref(t);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    });
    this.wake = null;
  }

  private async post(body: string): Promise<{ status: number; retryAfter: string | null; text: string }> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new Error(`no answer within ${this.o.requestTimeoutMs} ms`)), this.o.requestTimeoutMs);
    try {
      const res = await this.o.fetch(`${this.o.url}/api/v1/receipts`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.o.token}`, "content-type": "application/json" },
        body,
        signal: abort.signal,
      });
      return { status: res.status, retryAfter: res.headers.get("retry-after"), text: await res.text() };
    } finally {
      clearTimeout(timer);
    }
  }

  private async send(batch: Entry<Pending>[]) {
    let verdict: BatchVerdict;
    try {
      const res = await this.post(`{"records":[${batch.map((e) => e.item.body).join(",")}]}`);
      verdict = classifyBatch(res.status, res.retryAfter, res.text, batch.length, Date.now(), { retryAuthFailures: this.o.retryAuthFailures });
    } catch (e) {
      verdict = { kind: "retry", status: null, error: messageOf(e), retryAfterMs: null };
    }
    if (verdict.kind === "split") {
      this.batchCap = Math.max(1, Math.ceil(batch.length / 2));
      for (const e of batch) e.inFlight = false;
      return;
    }
    const again: Entry<Pending>[] = [];
    if (verdict.kind === "retry") again.push(...batch);
    else {
      verdict.items.forEach((item, i) => {
        const entry = batch[i];
        if (item.kind === "retry") return void again.push(entry);
        if (!this.queue.remove(entry)) return; // already counted
        if (item.kind === "delivered") {
          this.counters.delivered++;
          entry.item.finish("delivered");
        } else {
          this.counters.rejected++;
          entry.item.rejection = { status: item.status, code: item.code, message: item.message };
          entry.item.finish("rejected");
          this.emit({ kind: "rejected", operation_id: entry.item.operationId, status: item.status, code: item.code, message: item.message });
        }
      });
    }
    if (!again.length) {
      this.failures = 0;
      return;
    }
    for (const e of again) {
      e.inFlight = false;
      e.item.failed();
      if (e.item.withdrawn && this.queue.remove(e)) this.drop(e.item, "withdrawn");
    }
    this.failures++;
    this.counters.retries++;
    const status = verdict.kind === "retry" ? verdict.status : null;
    const retryAfterMs = verdict.kind === "retry" ? verdict.retryAfterMs : null;
    const delay = backoffDelay(this.failures, this.o.backoff, retryAfterMs);
    this.nextAttemptAt = Date.now() + delay;
    const error = verdict.kind === "retry" ? verdict.error : "some records were answered 429 or 5xx";
    this.emit({ kind: "retrying", records: again.length, status, error, delay_ms: delay });
  }
}

/** `promise`, or `fallback` when it takes longer than `ms`. */
export function race<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(fallback), ms);
    promise.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      () => {
        clearTimeout(t);
        resolve(fallback);
      },
    );
  });
}
