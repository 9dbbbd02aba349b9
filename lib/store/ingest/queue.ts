import "server-only";
import { chainOf } from "@/lib/domain/chains";
import { GuessPolicy } from "@/lib/domain/speculation";
import { knownChainCount } from "../chain/chain";
import { maybeCheckpoint } from "../chain/checkpoints";
import { provider } from "../db/database";
import { ingestTurn } from "../db/priority";
import { isDatabaseUnavailable, isStorageFull, UNAVAILABLE_RETRY_AFTER_SECONDS } from "../db/unavailable";
import { StoreError } from "../errors";
import { ingestRecords, type IngestResult, type ValidRecord } from "./records";
import { canSpeculate, ingestGroup, speculate, type Speculation, type Written } from "./speculation";
import { currentProjectId } from "../db/project-context";
import { envSetting } from "@/lib/domain/settings";

/**
 * Group commit for ingest. Writes are serialised by the chain lock anyway, so requests that
 * arrive while a transaction runs wait here and then commit together in the next one: one
 * fsync and one chain-head read for many requests instead of one each. Each request's records
 * stay whole (never split across transactions), are decided in arrival order (within a lane,
 * below) exactly as if the requests had run one after another, and get their own results back. If the group's
 * transaction fails, each request is retried alone, so one bad request fails only itself.
 */
const MAX_RECORDS_PER_TRANSACTION = 2000;

type Job = { records: ValidRecord[]; resolve: (r: IngestResult[]) => void; reject: (e: unknown) => void; at: number };

/**
 * One lane per set of hash chains (lib/domain/chains.ts). A request stays whole in one
 * transaction, which locks the chains of its operations (in ascending order, so transactions
 * never wait on each other in a circle). Requests whose records fall in the same chains commit
 * together; lanes of other chains commit side by side, each holding only its chains' locks. With
 * one chain there is one lane; requests of at most SMALL_REQUEST records (a tool call's report)
 * share one lane too, since many small transactions cost more than the parallelism gives back
 * (bench:chains measured single records at half the rate with a lane per chain).
 */
const SMALL_REQUEST = 10;
type Lane = { jobs: Job[]; running: boolean };
/** `guesses`: when a lane decides its next group ahead (ingest-speculation.ts); one chain means one lane that guesses. */
const state = globalThis as unknown as { __reconcileIngestQueue?: { lanes: Map<string, Lane>; waiting: number; guesses: GuessPolicy } };
const queue = (state.__reconcileIngestQueue ??= { lanes: new Map(), waiting: 0, guesses: new GuessPolicy() });
queue.guesses ??= new GuessPolicy(); // a queue made by this module's earlier version (a dev server's reload)
const laneOf = (key: string): Lane => {
  let lane = queue.lanes.get(key);
  if (!lane) queue.lanes.set(key, (lane = { jobs: [], running: false }));
  return lane;
};

/**
 * Backpressure (TRUST.md): at most this many records wait for a transaction
 * (`RECONCILE_INGEST_QUEUE_MAX`, default 20,000). Past it a request is refused whole with
 * `overloaded` and a time to wait, instead of the queue, and the memory, growing without
 * bound (the API answers it 429 with `Retry-After`). A request is always taken when nothing waits, whatever its size.
 */
export function queueLimit(): number {
  return envSetting("RECONCILE_INGEST_QUEUE_MAX");
}

/** Seconds until the records waiting now have likely been written (~5,000 a second), 1–30. */
const retryAfterFor = (waiting: number) => Math.min(30, Math.max(1, Math.ceil(waiting / 5000)));

export function submitIngest(records: ValidRecord[]): Promise<IngestResult[]> {
  if (!records.length) return Promise.resolve([]);
  const limit = queueLimit();
  if (queue.waiting > 0 && queue.waiting + records.length > limit) {
    const error = new StoreError("overloaded", `the server has ${queue.waiting.toLocaleString("en")} records waiting to be written (at most ${limit.toLocaleString("en")}): nothing of this request was stored; send it again after Retry-After seconds`, {
      waiting: queue.waiting,
      limit,
    }, { retryAfterSeconds: retryAfterFor(queue.waiting) });
    return Promise.reject(error);
  }
  queue.waiting += records.length;
  const n = knownChainCount();
  // Small requests share one lane whatever their chains: they are many and short, and one
  // transaction for all of them (locking their chains together) beats a transaction each.
  if (n === 1 || records.length <= SMALL_REQUEST) return enqueue("small", records);
  const chains = new Set<number>();
  for (const r of records) chains.add(chainOf(r.operationId, n));
  return enqueue([...chains].sort((a, b) => a - b).join(","), records);
}

function enqueue(chains: string, records: ValidRecord[]): Promise<IngestResult[]> {
  // A lane per project too: a group is one transaction, in one project's database (project-context.ts).
  const key = `${currentProjectId()} ${chains}`;
  const lane = laneOf(key);
  return new Promise((resolve, reject) => {
    lane.jobs.push({ records, resolve, reject, at: Date.now() });
    if (!lane.running) {
      lane.running = true;
      setImmediate(() => void drain(key, lane));
    }
  });
}

/** Yields to the event loop's I/O phase, so requests already received can join the group. */
const ioTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

type Group = { jobs: Job[]; offsets: number[]; combined: ValidRecord[] };

/** How many jobs, and records, the next group takes off the front of the lane. */
function nextGroup(lane: Lane): { take: number; size: number } {
  let take = 0;
  let size = 0;
  while (take < lane.jobs.length && (take === 0 || size + lane.jobs[take].records.length <= MAX_RECORDS_PER_TRANSACTION)) {
    size += lane.jobs[take].records.length;
    take++;
  }
  return { take, size };
}
const nextGroupSize = (lane: Lane) => nextGroup(lane).size;

/**
 * PostgreSQL: how long a request may wait here for its transaction (DATABASE_QUERY_TIMEOUT_MS).
 * A database that stalls (answering, but slowly) would otherwise keep requests waiting behind
 * group after group, far past any client's deadline; past it, a request is refused whole with
 * `unavailable` (503) before anything of it is sent. On SQLite, none (its writes do not wait on a network).
 */
function queueDeadlineMs(): number {
  return provider() === "postgresql" ? envSetting("DATABASE_QUERY_TIMEOUT_MS") : Infinity;
}

/** The refusal of requests the database could not be reached for, or that waited past the deadline. */
export function unavailableError(why: string, outcome = "nothing of this request was stored"): StoreError {
  return new StoreError("unavailable", `${why}: ${outcome}; send it again after Retry-After seconds`, undefined, { retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS });
}

/** Refuses, at the front of the lane, the requests that waited past the deadline. */
function expireWaiting(lane: Lane): void {
  const oldest = Date.now() - queueDeadlineMs();
  let n = 0;
  while (n < lane.jobs.length && lane.jobs[n].at < oldest) n++;
  if (n) failWaiting(lane.jobs.splice(0, n), unavailableError("the database answered too slowly for this request to be written in time"));
}

function failWaiting(jobs: Job[], error: StoreError): void {
  for (const job of jobs) {
    queue.waiting -= job.records.length;
    job.reject(error);
  }
}

/** The next group off the front of the lane, in one splice (shift() per job moves the whole queue each time). */
function takeGroup(lane: Lane): Group {
  expireWaiting(lane);
  const { take, size } = nextGroup(lane);
  const jobs = lane.jobs.splice(0, take);
  queue.waiting -= size;
  // Renumber so that indexes are unique in the combined batch, then hand each job its own.
  const offsets: number[] = [];
  const combined: ValidRecord[] = [];
  for (const job of jobs) {
    offsets.push(combined.length);
    for (const r of job.records) combined.push({ ...r, index: combined.length });
  }
  return { jobs, offsets, combined };
}

/**
 * A lane's groups, one transaction at a time. While one is written (from the moment its chain
 * records are linked: its projection, the database at work on its rows, COMMIT), the next is
 * taken and speculated (ingest-speculation.ts), so that its deciding and hashing overlap that
 * work instead of following it.
 */
async function drain(key: string, lane: Lane) {
  try {
    let next: { group: Group; spec: Promise<Speculation | null> } | null = null;
    while (next || lane.jobs.length) {
      // No new transaction while a person waits for a page (../db/priority.ts): those waiting here meanwhile join it.
      if (!next) await ingestTurn();
      const current: { group: Group; spec: Promise<Speculation | null> } = next ?? { group: takeGroup(lane), spec: Promise.resolve(null) };
      next = null;
      if (!current.group.jobs.length) continue; // every waiting request was past the deadline
      const spec = await current.spec;
      let heard!: (w: Written | null) => void;
      const written = new Promise<Written | null>((resolve) => (heard = resolve));
      const run = ingestGroup(current.group.combined, spec, (w, guess) => {
        if (guess) queue.guesses.heard(guess);
        heard(w);
      });
      run.then(
        () => heard(null),
        () => heard(null),
      );
      const w = await written;
      // Where guessing can help, the next group is taken now, while this one commits; elsewhere
      // after it, so that requests arriving meanwhile join it.
      if (lane.jobs.length && canSpeculate() && queue.guesses.shouldGuess(nextGroupSize(lane))) {
        const group = takeGroup(lane);
        // A speculation that fails (a lost connection, say) is no speculation: the group is decided under the lock.
        next = { group, spec: speculate(group.combined, w).catch(() => null) };
      }
      const lost = await settle(current.group, run);
      if (lost) {
        // The database is unreachable or not answering: what waits would meet the same fault,
        // one transaction's deadline after another. Refused now, whole, with 503.
        const error = unavailableError("the database could not be reached or did not answer in time");
        for (const job of next?.group.jobs ?? []) job.reject(error); // already counted out of `waiting`
        next = null;
        failWaiting(lane.jobs.splice(0), error);
        continue;
      }
      void maybeCheckpoint();
      if (!next) await ioTurn();
    }
  } finally {
    lane.running = false;
    // Lanes come and go with the sets of chains requests touch: none is kept empty.
    if (!lane.jobs.length && queue.lanes.get(key) === lane) queue.lanes.delete(key);
  }
}

/**
 * Each job of a group its own results; if the group's transaction failed, each job alone, so
 * that one bad request fails only itself. When it failed because the database could not be
 * reached or did not answer, every job is refused with `unavailable` instead (alone, each would
 * wait out the same deadline), and the answer is true.
 */
async function settle(group: Group, run: Promise<IngestResult[]>): Promise<boolean> {
  const { jobs, offsets } = group;
  try {
    const results = await run;
    // One pass over the results (never one per job: a group can hold 2,000 jobs).
    const perJob: IngestResult[][] = jobs.map(() => []);
    let j = 0;
    for (const r of [...results].sort((a, b) => a.index - b.index)) {
      while (j + 1 < jobs.length && r.index >= offsets[j + 1]) j++;
      perJob[j].push({ ...r, index: jobs[j].records[r.index - offsets[j]].index });
    }
    jobs.forEach((job, k) => job.resolve(perJob[k]));
    return false;
  } catch (e) {
    if (isDatabaseUnavailable(e)) {
      // The connection may have failed after COMMIT left: sent again, what was stored is recognised (idempotent ingest).
      const error = unavailableError("the database could not be reached or did not answer in time", "whether this request was stored is not known (sent again, anything stored is recognised, not stored twice)");
      for (const job of jobs) job.reject(error);
      return true;
    }
    // A full disk: nothing was stored, and trying each request alone would be one more failed write
    // each on a disk that has no room. All are refused (507) as the group was.
    if (jobs.length === 1 || isStorageFull(e)) for (const job of jobs) job.reject(e);
    else for (const job of jobs) await ingestRecords(job.records).then(job.resolve, job.reject);
    return false;
  }
}

/** Records waiting for a transaction now, in this process (GET /metrics: the group-commit queue's depth). */
export function queueDepth(): number {
  return queue.waiting;
}
