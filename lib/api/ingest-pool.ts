import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { ApiError, type ErrorCode } from "./errors";
import type { CheckContext, Checked, CheckedRecord } from "./ingest-check";
import { MiB } from "./body";

/**
 * Worker threads that parse and check ingest bodies (ingest-worker.ts) for the production
 * server's fast path (ingest-node.ts), so that the event loop, which runs every request's
 * transaction, spends its time on the database's answers instead. A CPU profile of bench:ingest
 * on PostgreSQL had parsing and checking at about a seventh of the server thread's busy time,
 * and that thread as the limit (docs/BENCHMARKS.md).
 *
 * A body goes to the least busy worker, unless every worker already has `MAX_PENDING` waiting,
 * or the body is over `MAX_WORKER_BYTES`: those are checked on the request's thread, as before,
 * in slices (a large body checked in a worker would hold up every body queued behind it). A
 * worker that fails is replaced, and what it held is checked on the request's thread.
 *
 * `RECONCILE_INGEST_WORKERS`: how many (0: none, everything on the request's thread). Default:
 * one less than the cores, at most 4.
 */

export type CheckRequest = { id: number; bytes: Uint8Array; ctx: CheckContext };
export type WireError = { code: ErrorCode; message: string; details?: unknown };
export type WireChecked = { kind: "single"; record: CheckedRecord } | { kind: "batch"; valid: CheckedRecord[]; failed: { index: number; error: WireError }[] };
export type CheckReply = { id: number; checked: WireChecked } | { id: number; refused: WireError } | { id: number; crashed: string };

/** Bodies up to this size go to a worker. */
export const MAX_WORKER_BYTES = 1 * MiB;
/** Bodies waiting on one worker before the next is checked on the request's thread. */
export const MAX_PENDING = 4;

const WORKER_FILE = path.join(import.meta.dirname, "ingest-worker.ts");

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
/** tsx's ESM API (its `exports` entry), found from this project wherever the process started. */
function tsxApi(): string {
  const manifest = createRequire(import.meta.url).resolve("tsx/package.json");
  const entry = (JSON.parse(readFileSync(manifest, "utf8")) as { exports: Record<string, { import: { default: string } }> }).exports["./esm/api"].import.default;
  return pathToFileURL(path.join(path.dirname(manifest), entry)).href;
}

const bootData = () => ({
  tsx: tsxApi(),
  file: WORKER_FILE,
  parent: pathToFileURL(`${process.cwd()}/`).href,
});

type Pending = { resolve: (c: Checked) => void; reject: (e: unknown) => void };

/** Thrown when a worker stopped with a body in hand: the caller checks that body itself. */
export class WorkerGone extends Error {}

class CheckWorker {
  readonly pending = new Map<number, Pending>();
  private readonly worker: Worker;
  gone = false;

  constructor(onGone: () => void) {
    this.worker = new Worker(BOOT, { eval: true, execArgv: [], workerData: bootData() });
    this.worker.on("message", (reply: CheckReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if ("checked" in reply) p.resolve(fromWire(reply.checked));
      else if ("refused" in reply) p.reject(apiError(reply.refused));
      else p.reject(new Error(`checking the body failed in a worker thread: ${reply.crashed}`));
    });
    const stop = (why: string) => {
      if (this.gone) return;
      this.gone = true;
      for (const p of this.pending.values()) p.reject(new WorkerGone(why));
      this.pending.clear();
      onGone();
    };
    this.worker.on("error", (e) => stop(e instanceof Error ? e.message : String(e)));
    this.worker.on("exit", (code) => stop(`exited (${code})`));
    // It must not keep a process alive.
    this.worker.unref();
  }

  check(id: number, bytes: Buffer, ctx: CheckContext): Promise<Checked> {
    return new Promise<Checked>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // A copy of exactly the body's bytes, handed over: the Buffer may share its memory.
      const copy = new Uint8Array(bytes);
      this.worker.postMessage({ id, bytes: copy, ctx } satisfies CheckRequest, [copy.buffer]);
    });
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

const apiError = (w: WireError) => new ApiError(w.code, w.message, w.details);

function fromWire(w: WireChecked): Checked {
  return w.kind === "single" ? w : { kind: "batch", valid: w.valid, failed: w.failed.map((f) => ({ index: f.index, error: apiError(f.error) })) };
}

export class CheckPool {
  private readonly workers: (CheckWorker | null)[];
  private next = 0;
  /** Bodies checked in a worker, and on the request's thread because none was free (tests, logs). */
  readonly counts = { inWorker: 0, declined: 0 };

  constructor(readonly size: number) {
    this.workers = Array.from({ length: size }, () => null);
  }

  private worker(i: number): CheckWorker {
    const w = this.workers[i];
    if (w && !w.gone) return w;
    const fresh = new CheckWorker(() => {
      if (this.workers[i] === fresh) this.workers[i] = null;
    });
    this.workers[i] = fresh;
    return fresh;
  }

  /**
   * The body checked in a worker; null when it is to be checked on the request's thread (too
   * large, or every worker busy). Rejects with the ApiError the body earns, or with WorkerGone.
   */
  check(bytes: Buffer, ctx: CheckContext): Promise<Checked> | null {
    if (!this.size || bytes.length > MAX_WORKER_BYTES) return null;
    let best = -1;
    for (let i = 0; i < this.size; i++) {
      const load = this.workers[i]?.pending.size ?? 0;
      if (load < MAX_PENDING && (best === -1 || load < (this.workers[best]?.pending.size ?? 0))) best = i;
    }
    if (best === -1) {
      this.counts.declined++;
      return null;
    }
    this.counts.inWorker++;
    return this.worker(best).check(++this.next, bytes, ctx);
  }

  /** Starts every worker now, so that the first requests do not wait for one to load. */
  warm(): void {
    for (let i = 0; i < this.size; i++) this.worker(i);
  }

  /** The workers running now (tests). */
  running(): number {
    return this.workers.filter((w) => w && !w.gone).length;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w?.terminate()));
  }
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
