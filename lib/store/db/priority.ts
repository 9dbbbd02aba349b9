import { envSetting } from "@/lib/domain/settings";

/**
 * Interactive work first (issue 51). Pages and ingest share one thread: at full ingest, each step
 * of a page (a query, its render, its answer) waited behind a turn of the event loop holding
 * every ingest request's validating and hashing and a group's whole transaction, and a page took
 * about a second (bench:responsive: 20× the idle p95).
 *
 * The server counts the interactive requests in flight: everything but ingest and long polls
 * (lib/api/interactive.ts, lib/cli/serve.ts). While there is one:
 * - ingest's long work runs in slices of `RECONCILE_INTERACTIVE_SLICE_MS` (default 4 ms; pace.ts's
 *   ingestPacer) instead of 25 ms;
 * - its steps outside a transaction (validating a request, starting a group's transaction, each
 *   slice) stand in one line (`ingestTurn`), released one a turn of the event loop in the order
 *   they came, each after a pause for the pages as long as ingest's last slices ran: ingest keeps
 *   at least half the thread, the pages get the rest as soon as they need it. The pause ends at
 *   the first turn in which nothing else ran (the pages wait on their clients, not on this thread);
 * - inside a transaction nothing waits in the line (a pause there keeps the write lock, and every
 *   other ingest request, waiting with it): its slices go on at the next turn, and what they ran
 *   is paid back before ingest's next step outside the lock.
 * With none in flight nothing changes. `RECONCILE_INTERACTIVE_SLICE_MS=0` turns it off.
 */

type State = { interactive: number; line: (() => void)[]; releasing: boolean; owed: number; slice?: number; sliceRaw?: string | null };
const store = globalThis as unknown as { __reconcilePriority?: State };
const state = (store.__reconcilePriority ??= { interactive: 0, line: [], releasing: false, owed: 0 });
state.owed ??= 0;
state.sliceRaw ??= null; // never an environment value: the first read parses it

/** While a person waits, ingest's share of the thread: after each slice, as long again is left to the pages. */
const INGEST_SHARE = 0.5;
/** The longest pause the line makes for the pages at once (a slice that ran long is not paid back whole). */
const MAX_PAUSE_MS = 50;
/** A turn of the event loop this short ran nothing but the pause's own step. */
const IDLE_TURN_MS = 0.2;

/** The slice length while an interactive request is in flight; 0 when interactive-first is off. Read on hot paths: parsed once per value. */
export function interactiveSliceMs(): number {
  const raw = process.env.RECONCILE_INTERACTIVE_SLICE_MS;
  if (raw !== state.sliceRaw) {
    state.slice = envSetting("RECONCILE_INTERACTIVE_SLICE_MS");
    state.sliceRaw = raw;
  }
  return state.slice!;
}

/** True while an interactive request is in flight and interactive-first is on. */
export function interactiveWaiting(): boolean {
  return state.interactive > 0 && interactiveSliceMs() > 0;
}

/** An interactive request began; call what this returns when it has ended (more than once is harmless). */
export function interactiveBegin(): () => void {
  state.interactive++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    state.interactive--;
  };
}

/**
 * An ingest step's turn: at once when no interactive request is in flight and nothing stands in
 * the line; otherwise in a later turn of the event loop, one waiter a turn in the order they came,
 * after a pause as long as the slices before it ran (`ranMs`: the slice the caller just ran).
 */
export function ingestTurn(ranMs = 0): Promise<void> {
  if (!state.line.length && !interactiveWaiting()) {
    state.owed = 0;
    return Promise.resolve();
  }
  state.owed += (ranMs * (1 - INGEST_SHARE)) / INGEST_SHARE;
  return new Promise<void>((resolve) => {
    state.line.push(resolve);
    release();
  });
}

/** A slice run inside a write transaction, without a pause (pace.ts): paid back at ingest's next turn. */
export function oweToPages(ranMs: number): void {
  state.owed += (ranMs * (1 - INGEST_SHARE)) / INGEST_SHARE;
}

function release(): void {
  if (state.releasing) return;
  state.releasing = true;
  // In the next turn, when the slice just released has run and said how long it took.
  setImmediate(() => {
    const pause = interactiveWaiting() ? Math.min(state.owed, MAX_PAUSE_MS) : 0;
    state.owed = 0;
    if (pause < 1) releaseOne();
    else pauseForPages(pause);
  });
}

/**
 * Up to `ms` for the pages, a turn of the event loop at a time; it ends early at a turn in which
 * nothing else ran (the pages are waiting on their clients, not on this thread: a pause would idle it).
 */
function pauseForPages(ms: number): void {
  const end = performance.now() + ms;
  let last = performance.now();
  const hop = () => {
    const now = performance.now();
    if (now >= end || now - last < IDLE_TURN_MS) return releaseOne();
    last = now;
    setImmediate(hop);
  };
  setImmediate(hop);
}

function releaseOne(): void {
  state.releasing = false;
  state.line.shift()?.();
  if (state.line.length) release();
}
