import { ingestTurn, interactiveSliceMs, interactiveWaiting, oweToPages } from "./priority";

/**
 * Long synchronous work in slices: `await pace()` between items returns at once while the
 * current slice is younger than `sliceMs`, and otherwise lets the event loop serve what is
 * waiting (other requests, `/api/health`) before going on. A 4 MiB hostile batch is several
 * seconds of canonicalising and hashing on a slow core; done in one block it froze the server
 * (TRUST.md "What no request may do").
 */
/** The next turn of the event loop: what is waiting (other requests, `/api/health`) runs first. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function pacer(sliceMs = 25): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await nextTurn();
    since = performance.now();
  };
}

/**
 * The pacer of ingest's long work: the same, but while a person waits for a page its slices are
 * short (RECONCILE_INTERACTIVE_SLICE_MS) and take their turns in ingest's line (priority.ts).
 * `holdsLock`: the caller is inside a write transaction. Its slices then go on at the next turn
 * of the event loop, without standing in the line: every pause there would keep the write lock,
 * and every other ingest request, waiting with it. What they ran is paid back to the pages at
 * ingest's next step outside the lock.
 */
export function ingestPacer({ holdsLock = false } = {}): () => Promise<void> {
  let since = performance.now();
  return async () => {
    const ran = performance.now() - since;
    if (!interactiveWaiting()) {
      if (ran < 25) return;
      await nextTurn();
    } else {
      if (ran < interactiveSliceMs()) return;
      if (holdsLock) {
        oweToPages(ran);
        await nextTurn();
      } else await ingestTurn(ran);
    }
    since = performance.now();
  };
}
