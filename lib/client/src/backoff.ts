/** When to try again: exponential backoff with jitter, never sooner than the server's Retry-After. */

export type BackoffOptions = {
  /** The first delay, in milliseconds (default 250). */
  initialMs?: number;
  /** No delay is longer than this (default 30,000), Retry-After included. */
  maxMs?: number;
};

export const DEFAULT_BACKOFF = { initialMs: 250, maxMs: 30_000 } as const;

/**
 * The delay before attempt `failures + 1`, after `failures` consecutive failures (1 or more):
 * initialMs · 2^(failures−1), capped at maxMs, with "equal jitter" (between half and all of it)
 * so that many clients do not come back at once. A Retry-After (ms) raises it, up to maxMs.
 */
export function backoffDelay(failures: number, options: BackoffOptions = {}, retryAfterMs: number | null = null, random: () => number = Math.random): number {
  const initial = options.initialMs ?? DEFAULT_BACKOFF.initialMs;
  const max = options.maxMs ?? DEFAULT_BACKOFF.maxMs;
  const exponent = Math.min(Math.max(failures, 1) - 1, 30);
  const base = Math.min(max, initial * 2 ** exponent);
  const jittered = base / 2 + (random() * base) / 2;
  return Math.round(Math.min(max, Math.max(jittered, retryAfterMs ?? 0)));
}

/**
 * A Retry-After header in milliseconds: delay-seconds ("30") or an HTTP date; null when absent or
 * not understood (then backoff alone decides).
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  if (value == null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}
