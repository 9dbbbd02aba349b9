import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * SQLite's WAL checkpoints, off the commit path (issue 17, part 1).
 *
 * In WAL mode a commit appends the pages it changed to the WAL; a checkpoint later copies them
 * into the database file and syncs it. By default the connection that commits runs the
 * checkpoint itself, on the event loop, as soon as the WAL passes 1,000 pages (4 MiB). A
 * batch at three million operations changes ~900 pages, most of them leaves of indexes keyed
 * by random ids, so nearly every commit also copied ~900 pages to random places of a 13 GB
 * file and synced it: two thirds of the time in COMMIT (bench:growth, profiled;
 * docs/BENCHMARKS.md).
 *
 * Here a worker thread, on its own connection, runs PASSIVE checkpoints: it copies what has
 * been committed while commits go on (PASSIVE never blocks a writer or a reader, and gives up
 * on SQLite's checkpoint lock instead of waiting). The writers' own automatic checkpoint is
 * raised to `WRITER_CHECKPOINT_PAGES`: it remains the bound on the WAL's size, and the way the
 * WAL restarts from its beginning (a checkpoint by the writer right after its commit catches
 * up, and the next transaction starts the file over); by then the worker has copied nearly
 * everything, so the writer's part is small.
 *
 * Durability is SQLite's own: a checkpoint only copies committed pages and syncs before it
 * records its progress, and one killed half-way is redone from the WAL at the next open (the
 * crash harness kills servers while this runs).
 */

/** The writers' automatic checkpoint (wal_autocheckpoint), in pages: the WAL's size bound. */
export const WRITER_CHECKPOINT_PAGES = 20_000;
/** The pause between the worker's checkpoints. Shorter copies often-changed pages more often. */
const INTERVAL_MS = 100;

/** The worker, as plain JavaScript (it runs outside any bundler). */
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
// timeout 0: a checkpoint that meets a lock gives up (PASSIVE does not wait), and tries again.
const db = new Database(workerData.file, { timeout: 0 });
db.pragma("synchronous = FULL");
db.pragma("wal_autocheckpoint = 0");
let timer = null;
let stopping = false;
function tick() {
  timer = null;
  if (stopping) return;
  try {
    const [r] = db.pragma("wal_checkpoint(PASSIVE)");
    if (r && r.checkpointed > 0) parentPort.postMessage({ log: r.log, checkpointed: r.checkpointed });
  } catch (e) {
    // SQLITE_BUSY (another checkpoint runs) or the file went away: try again at the next tick.
  }
  timer = setTimeout(tick, workerData.interval);
}
parentPort.on("message", (m) => {
  if (m !== "stop") return;
  stopping = true;
  if (timer) clearTimeout(timer);
  db.close();
  parentPort.close();
});
tick();
`;

export type CheckpointProgress = { log: number; checkpointed: number };

/** One database file's checkpointer thread. `stop()` waits for it to close its connection. */
export class SqliteCheckpointer {
  private readonly worker: Worker;
  private stopped: Promise<void> | null = null;
  private exited = false;
  /** The last checkpoint that copied pages (WAL pages then, pages copied so far), for tests. */
  last: CheckpointProgress | null = null;
  checkpoints = 0;

  constructor(file: string, interval = INTERVAL_MS) {
    const driver = createRequire(`${process.cwd()}/`).resolve("better-sqlite3");
    this.worker = new Worker(WORKER, { eval: true, execArgv: [], workerData: { file, driver, interval } });
    this.worker.on("message", (m: CheckpointProgress) => {
      this.last = m;
      this.checkpoints++;
    });
    // A worker that fails (the driver missing, say) leaves the writers' own checkpoints to do
    // the work, as without it; it must not take the process down.
    this.worker.on("error", (e) => console.warn(`[reconcile] SQLite checkpointer stopped: ${e instanceof Error ? e.message : String(e)}`));
    this.worker.once("exit", () => (this.exited = true));
    // It must not keep a CLI command's process alive.
    this.worker.unref();
  }

  /** Whether the thread still runs. */
  get running(): boolean {
    return !this.exited;
  }

  stop(): Promise<void> {
    this.stopped ??= new Promise<void>((resolve) => {
      if (this.exited) return resolve();
      const done = () => resolve();
      this.worker.once("exit", done);
      // Held again while it stops: an unreferenced thread's exit can end the process's event
      // loop before the code awaiting it runs (a command's exit code was then lost, and 0).
      this.worker.ref();
      // It closes its connection and its port, and ends by itself.
      this.worker.postMessage("stop");
      // If it is gone already, or stuck in a long checkpoint, do not wait for ever.
      setTimeout(() => void this.worker.terminate().then(done, done), 5_000).unref();
    });
    return this.stopped;
  }
}
