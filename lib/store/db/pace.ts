/**
 * Long synchronous work in slices: `await pace()` between items returns at once while the
 * current slice is younger than `sliceMs`, and otherwise lets the event loop serve what is
 * waiting (other requests, `/api/health`) before going on. A 4 MiB hostile batch is several
 * seconds of canonicalising and hashing on a slow core; done in one block it froze the server
 * (TRUST.md "What no request may do").
 */
export function pacer(sliceMs = 25): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}
