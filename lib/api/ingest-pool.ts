import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { ApiError, type ErrorCode } from "./errors";
import { checkBody, type CheckContext, type Checked, type CheckedRecord } from "./ingest-check";
import { MiB } from "./body";

/**
 * Worker threads that parse and check ingest bodies (ingest-worker.ts) for the production
 * server's fast path (ingest-node.ts), so that the event loop, which runs every request's
 * transaction, spends its time on the database's answers instead. A CPU profile of bench:ingest
 * on PostgreSQL had parsing and checking at about a seventh of the server thread's busy time,
 * and that thread as the limit (docs/BENCHMARKS.md).
 *
 * A body goes to the least busy worker that is ready. It is checked on the request's thread
 * instead, as before, when no worker is ready, when every one already has `MAX_PENDING`
 * bodies, or when it is over `MAX_WORKER_BYTES` (a worker checks one body at a time, and a large
 * one would make those queued behind it wait). A worker that stops (it failed, or a check took
 * over `CHECK_TIMEOUT_MS`) hands its bodies back to their requests' thread, is logged, and is
 * started again after a pause that doubles while it keeps failing.
 *
 * `RECONCILE_INGEST_WORKERS`: how many (0: none, everything on the request's thread). Default:
 * one less than the cores, at most 4.
 */

export type CheckRequest = { id: number; bytes: Uint8Array; ctx: CheckContext };
export type WireError = { code: ErrorCode; message: string; details?: unknown };
export type WireChecked = { kind: "single"; record: CheckedRecord } | { kind: "batch"; valid: CheckedRecord[]; failed: { index: number; error: WireError }[] };
export type CheckReply = { ready: true } | { id: number; checked: WireChecked } | { id: number; refused: WireError } | { id: number; crashed: string };

/** Bodies up to this size go to a worker. */
export const MAX_WORKER_BYTES = 1 * MiB;
/** Bodies waiting on one worker before the next is checked on the request's thread. */
export const MAX_PENDING = 4;
/** A check that takes longer stops its worker (a 1 MiB hostile body takes about a second). */
const CHECK_TIMEOUT_MS = 30_000;
/** A worker not ready by then is stopped (tsx compiles its modules at boot). */
const BOOT_TIMEOUT_MS = 60_000;
/** The pause before a stopped worker is started again; doubled at each failure in a row, up to a minute. */
const RESTART_PAUSE_MS = 1_000;
/** Each worker's heap. A 1 MiB body's check needs a few tens of MiB. */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 48 };

/**
 * The worker's entry: tsx's loader, then ingest-worker.ts, so that it runs the same TypeScript as
 * the server. (`execArgv: ["--import", "tsx"]` does not reach a worker's own entry on Node 20.)
 */
const BOOT = `
const { workerData } = require("node:worker_threads");
import(workerData.tsx)
  .then(({ tsImport }) => tsImport(workerData.file, workerData.parent))
  .catch((e) => { console.error(e); process.exit(1); });
`;

type BootData = { tsx: string; file: string; parent: string };
let boot: BootData | null = null;

/** tsx's ESM API (its `exports` entry) and the worker's module, found once from this project. */
function bootData(): BootData {
  if (boot) return boot;
  const manifest = createRequire(import.meta.url).resolve("tsx/package.json");
  const entry = (JSON.parse(readFileSync(manifest, "utf8")) as { exports: Record<string, { import: { default: string } }> }).exports["./esm/api"].import.default;
  return (boot = {
    tsx: pathToFileURL(path.join(path.dirname(manifest), entry)).href,
    file: pathToFileURL(path.join(import.meta.dirname, "ingest-worker.ts")).href,
    parent: pathToFileURL(`${process.cwd()}/`).href,
  });
}

type Pending = { resolve: (c: Checked) => void; reject: (e: unknown) => void; timer: NodeJS.Timeout };

/** Thrown when a worker stopped with a body in hand: the caller checks that body itself. */
export class WorkerGone extends Error {}

const apiError = (w: WireError) => new ApiError(w.code, w.message, w.details);

function fromWire(w: WireChecked): Checked {
  return w.kind === "single" ? w : { kind: "batch", valid: w.valid, failed: w.failed.map((f) => ({ index: f.index, error: apiError(f.error) })) };
}

class CheckWorker {
  readonly pending = new Map<number, Pending>();
  private readonly worker: Worker;
  ready = false;
  gone = false;
  /** True once ready; false if it stopped first. */
  readonly started: Promise<boolean>;

  constructor(private readonly onStop: (why: string, wasReady: boolean) => void) {
    let started!: (ok: boolean) => void;
    this.started = new Promise<boolean>((resolve) => (started = resolve));
    this.worker = new Worker(BOOT, { eval: true, execArgv: [], workerData: bootData(), resourceLimits: RESOURCE_LIMITS });
    const bootTimer = setTimeout(() => this.stop(`not ready after ${BOOT_TIMEOUT_MS / 1000} s`), BOOT_TIMEOUT_MS).unref();
    this.worker.on("message", (reply: CheckReply) => {
      if ("ready" in reply) {
        clearTimeout(bootTimer);
        this.ready = true;
        started(true);
        return;
      }
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      clearTimeout(p.timer);
      if ("checked" in reply) p.resolve(fromWire(reply.checked));
      else if ("refused" in reply) p.reject(apiError(reply.refused));
      else p.reject(new Error(`checking the body failed in a worker thread: ${reply.crashed}`));
    });
    this.worker.on("messageerror", () => this.stop("a reply could not be read"));
    this.worker.on("error", (e) => this.stop(e instanceof Error ? e.message : String(e)));
    this.worker.on("exit", (code) => {
      clearTimeout(bootTimer);
      started(false);
      this.stop(`it exited (${code})`);
    });
    // It must not keep a process alive.
    this.worker.unref();
  }

  /** Hands back every body it holds and ends the thread; once. */
  stop(why: string): void {
    if (this.gone) return;
    this.gone = true;
    const wasReady = this.ready;
    this.ready = false;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new WorkerGone(why));
    }
    this.pending.clear();
    void this.worker.terminate();
    this.onStop(why, wasReady);
  }

  check(id: number, bytes: Buffer, ctx: CheckContext): Promise<Checked> {
    return new Promise<Checked>((resolve, reject) => {
      const timer = setTimeout(() => this.stop(`a check took over ${CHECK_TIMEOUT_MS / 1000} s`), CHECK_TIMEOUT_MS).unref();
      this.pending.set(id, { resolve, reject, timer });
      // A copy of exactly the body's bytes, handed over: the Buffer may share its memory, and
      // stays whole for the request's thread should this worker stop.
      const copy = new Uint8Array(bytes);
      this.worker.postMessage({ id, bytes: copy, ctx } satisfies CheckRequest, [copy.buffer]);
    });
  }
}

type Slot = { worker: CheckWorker | null; failures: number; retryAt: number };

export class CheckPool {
  private readonly slots: Slot[];
  private next = 0;
  private closed = false;
  /** Bodies answered by a worker, left to the request's thread (none free), or handed back (tests, logs). */
  readonly counts = { inWorker: 0, declined: 0, handedBack: 0 };

  constructor(readonly size: number) {
    this.slots = Array.from({ length: size }, () => ({ worker: null, failures: 0, retryAt: 0 }));
  }

  /** A slot's worker, started when it has none and its pause is over; null while it boots or pauses. */
  private ensure(slot: Slot): CheckWorker | null {
    if (this.closed) return null;
    if (slot.worker && !slot.worker.gone) return slot.worker;
    if (Date.now() < slot.retryAt) return null;
    let fresh: CheckWorker;
    try {
      fresh = new CheckWorker((why, wasReady) => this.stopped(slot, fresh, why, wasReady));
    } catch (e) {
      this.stopped(slot, null, e instanceof Error ? e.message : String(e), false);
      return null;
    }
    slot.worker = fresh;
    void fresh.started.then((ok) => ok && (slot.failures = 0));
    return fresh;
  }

  private stopped(slot: Slot, worker: CheckWorker | null, why: string, wasReady: boolean) {
    if (slot.worker === worker) slot.worker = null;
    if (this.closed) return;
    slot.failures = wasReady ? 1 : slot.failures + 1;
    const pause = Math.min(60_000, RESTART_PAUSE_MS * 2 ** (slot.failures - 1));
    slot.retryAt = Date.now() + pause;
    console.warn(`[reconcile] an ingest worker thread stopped (${why}); bodies are checked on the server's thread until it is started again, in ${pause / 1000} s`);
  }

  /**
   * Starts every worker now, so that the first requests do not wait for one to load. Resolves
   * with how many are ready.
   */
  async warm(): Promise<number> {
    const started = this.slots.map((slot) => this.ensure(slot)?.started ?? Promise.resolve(false));
    return (await Promise.all(started)).filter(Boolean).length;
  }

  /**
   * The body checked in a worker; null when it is to be checked on the request's thread (too
   * large, or no worker ready and free). Rejects with the ApiError the body earns, or with WorkerGone.
   */
  check(bytes: Buffer, ctx: CheckContext): Promise<Checked> | null {
    if (!this.size || bytes.length > MAX_WORKER_BYTES) return null;
    let best: CheckWorker | null = null;
    for (const slot of this.slots) {
      const w = this.ensure(slot);
      if (w?.ready && w.pending.size < MAX_PENDING && (!best || w.pending.size < best.pending.size)) best = w;
    }
    if (!best) {
      this.counts.declined++;
      return null;
    }
    return best.check(++this.next, bytes, ctx).then(
      (c) => {
        this.counts.inWorker++;
        return c;
      },
      (e) => {
        if (e instanceof WorkerGone) this.counts.handedBack++;
        else this.counts.inWorker++;
        throw e;
      },
    );
  }

  /** The workers ready now (tests). */
  running(): number {
    return this.slots.filter((s) => s.worker?.ready).length;
  }

  /** Stops every worker, handing back what they hold; the pool checks nothing more. */
  close(): void {
    this.closed = true;
    for (const s of this.slots) s.worker?.stop("the pool closed");
  }
}

/**
 * A body parsed and checked in a worker of `pool` when one is free, else on this thread: the
 * same answer either way (ingest-pool.itest.ts).
 */
export async function checkWithPool(pool: CheckPool | null, bytes: Buffer, ctx: CheckContext): Promise<Checked> {
  const inWorker = pool?.check(bytes, ctx);
  if (inWorker) {
    try {
      return await inWorker;
    } catch (e) {
      if (!(e instanceof WorkerGone)) throw e;
    }
  }
  return checkBody(bytes, ctx);
}

/** RECONCILE_INGEST_WORKERS, or one less than the cores (at most 4). */
export function ingestWorkerCount(env: NodeJS.ProcessEnv = process.env): number {
  const set = env.RECONCILE_INGEST_WORKERS;
  if (set !== undefined && set.trim() !== "") {
    const n = Number(set);
    if (!Number.isInteger(n) || n < 0 || n > 64) throw new Error(`RECONCILE_INGEST_WORKERS must be a whole number from 0 to 64, not ${JSON.stringify(set)}`);
    return n;
  }
  return Math.max(0, Math.min(4, os.availableParallelism() - 1));
}
