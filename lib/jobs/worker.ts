import "server-only";
import { perProject } from "@/lib/store/db/project-context";
import { anyDue, claimJobs, finishJob, nextDueAt, retryJob, type Job } from "@/lib/store/work/jobs";
import { writeTransaction } from "@/lib/store/db/db";

/**
 * The job worker: runs in the production server (lib/cli/serve.ts), claims due jobs of the
 * kinds registered in this process and hands each to its handler. A handler ends its job itself:
 * finishJob inside the transaction that records the result, or retryJob. A handler that throws
 * is retried by the worker (backoff doubling from 1 s to 5 min) and, after MAX_ATTEMPTS claims,
 * marked failed with the last error. Leases make this safe with several instances and across
 * crashes: a job whose instance died is claimed again when its lease ends.
 *
 * State lives on globalThis: route handlers run in Next.js's bundle, which has its own copies of
 * the modules, and wakeJobs() called there must reach the worker started by the server.
 *
 * Each project keeps its jobs in its own database (lib/store/db/project-context.ts): the server
 * starts a worker per project, inside that project, and each has its own loop, wake-up and
 * counts of jobs running; the handlers are the same for all.
 */

export type JobHandler = (job: Job, signal: AbortSignal) => Promise<void>;

type Registered = { handler: JobHandler; concurrency: number };

type WorkerState = {
  /** Jobs of each kind running now in this project. */
  running: Map<string, number>;
  wake: (() => void) | null;
  woken: boolean;
  /** When the running worker last went round its loop (epoch ms); null: no worker runs in this process. */
  beat?: number | null;
  pollMs?: number;
};

const root = globalThis as unknown as { __reconcileJobHandlers?: Map<string, Registered> };
const handlers = (root.__reconcileJobHandlers ??= new Map());
/** The current project's worker (project-context.ts). */
const projectWorker = perProject("job-worker", (): WorkerState => ({ running: new Map(), wake: null, woken: false }));

/** A handler that throws is claimed again at most this many times, then marked failed. */
export const MAX_ATTEMPTS = 20;
export const DEFAULT_LEASE_MS = 60_000;
export const DEFAULT_POLL_MS = 500;

export function registerJobHandler(kind: string, handler: JobHandler, opts: { concurrency?: number } = {}): void {
  handlers.set(kind, { handler, concurrency: Math.max(1, opts.concurrency ?? 4) });
}

/** Tells this process's worker of the current project that jobs were committed (otherwise it polls). */
export function wakeJobs(): void {
  const state = projectWorker();
  state.woken = true;
  state.wake?.();
}

/**
 * Whether this process's worker is alive (/api/health/ready): `off` when none was started here
 * (RECONCILE_JOBS=off, or not the production server), `stalled` when its loop has not come
 * round for 30 s (a loop waits at most its poll interval between rounds), else `running`.
 */
export function workerState(now = Date.now()): { state: "running" | "stalled" | "off"; lastBeatAgoMs: number | null } {
  const state = projectWorker();
  if (state.beat == null) return { state: "off", lastBeatAgoMs: null };
  const ago = now - state.beat;
  return { state: ago > Math.max(30_000, 10 * (state.pollMs ?? DEFAULT_POLL_MS)) ? "stalled" : "running", lastBeatAgoMs: ago };
}

/** The worker's own backoff for a handler that threw: 1 s, 2 s, 4 s … 5 min. */
export function fallbackDelayMs(attempts: number): number {
  return Math.min(300_000, 1000 * 2 ** Math.max(0, attempts - 1));
}

export type JobWorker = { stop: () => Promise<void> };

export function startJobWorker(opts: { pollMs?: number; leaseMs?: number; log?: (line: string) => void } = {}): JobWorker {
  const pollMs = opts.pollMs ?? DEFAULT_POLL_MS;
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  const log = opts.log ?? ((line: string) => console.error(line));
  const state = projectWorker();
  const running = (kind: string) => state.running.get(kind) ?? 0;
  const abort = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let stopped = false;

  const run = async (kind: string, reg: Registered, job: Job) => {
    state.running.set(kind, running(kind) + 1);
    try {
      await reg.handler(job, abort.signal);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      try {
        if (job.attempts >= MAX_ATTEMPTS) await writeTransaction((tx) => finishJob(tx, job, { status: "failed", error: message }));
        else await retryJob(job, Date.now() + fallbackDelayMs(job.attempts), message);
      } catch (inner) {
        // Lost the lease meanwhile: whoever holds it now decides. Anything else: the lease runs out and the job is claimed again.
        if (!(inner instanceof Error && inner.name === "LeaseLost")) log(`job ${job.key}: could not record the failure (${String(inner)})`);
      }
    } finally {
      state.running.set(kind, running(kind) - 1);
      wakeJobs();
    }
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (state.woken || stopped) return resolve();
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        state.wake = null;
        resolve();
      }
      state.wake = done;
    });

  state.pollMs = pollMs;
  const loop = (async () => {
    while (!stopped) {
      state.beat = Date.now();
      state.woken = false;
      let claimed = 0;
      try {
        const free = [...handlers].filter(([kind, r]) => running(kind) < r.concurrency).map(([kind]) => kind);
        if (free.length && (await anyDue(free))) {
          for (const kind of free) {
            const reg = handlers.get(kind)!;
            const jobs = await claimJobs(kind, reg.concurrency - running(kind), leaseMs);
            claimed += jobs.length;
            for (const job of jobs) {
              const p = run(kind, reg, job).finally(() => inFlight.delete(p));
              inFlight.add(p);
            }
          }
        }
      } catch (e) {
        log(`job worker: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (stopped) break;
      if (claimed) continue;
      let wait = pollMs;
      try {
        const next = await nextDueAt([...handlers.keys()]);
        if (next !== null) wait = Math.max(10, Math.min(pollMs, next - Date.now()));
      } catch {
        // polled again soon
      }
      await sleep(wait);
    }
  })();

  return {
    stop: async () => {
      stopped = true;
      state.beat = null;
      abort.abort();
      state.wake?.();
      await loop;
      await Promise.allSettled([...inFlight]);
    },
  };
}
