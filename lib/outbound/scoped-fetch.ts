import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";

/**
 * A vendor client that takes no custom fetch (Langfuse's: its generated REST client calls the
 * global `fetch`, @langfuse/core getFetchFn) can still be made to use the guarded outbound client,
 * for the calls we make and no others: `withFetch(f, work)` runs `work` in an AsyncLocalStorage
 * scope in which the global fetch is `f`.
 *
 * How, and what it leaves alone:
 *   - the global fetch is wrapped once per process (the marker and the scope live on globalThis,
 *     so a second copy of this module in another server bundle finds them and adds no wrapper);
 *   - outside a scope the wrapper calls the fetch it found, with the same arguments and `this`,
 *     and returns its promise unchanged: Next.js's patched fetch, the OTLP exporter, verifiers and
 *     webhooks see no difference. The wrapper carries the found fetch's own properties (Next.js
 *     marks its patched fetch with `__nextPatched`, `_nextOriginalFetch`) and its name;
 *   - nothing is ever restored or swapped back (a swap per call would race with every other
 *     request in flight); a fetch installed over the wrapper later keeps it as its inner fetch;
 *   - the scope covers only the async work `work` starts: a fetch started elsewhere while it runs
 *     is not in it.
 */

type Root = { __reconcileScopedFetch?: { scope: AsyncLocalStorage<typeof fetch>; wrapper: typeof fetch } };
const root = globalThis as unknown as Root;

function install(): AsyncLocalStorage<typeof fetch> {
  const found = root.__reconcileScopedFetch;
  if (found) return found.scope;
  const scope = new AsyncLocalStorage<typeof fetch>();
  const inner = globalThis.fetch;
  const wrapper = function fetch(this: unknown, input: RequestInfo | URL, init?: RequestInit) {
    const scoped = scope.getStore();
    return scoped ? scoped(input, init) : inner.call(this, input, init);
  } as typeof fetch;
  for (const [key, desc] of Object.entries(Object.getOwnPropertyDescriptors(inner))) {
    if (key === "length" || key === "prototype") continue;
    Object.defineProperty(wrapper, key, desc);
  }
  root.__reconcileScopedFetch = { scope, wrapper };
  globalThis.fetch = wrapper;
  return scope;
}

/** Runs `work` with the global fetch being `f` for its own async work only. */
export function withFetch<T>(f: typeof fetch, work: () => Promise<T>): Promise<T> {
  return install().run(f, work);
}
