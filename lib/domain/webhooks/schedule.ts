import { numericSetting } from "../settings";

/**
 * When each delivery attempt happens (docs/API.md "Webhooks"): the delay
 * before attempt n+1 (from 0), counted from the previous attempt's failure. Ten attempts.
 */
export const RETRY_SCHEDULE_MS = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3600_000,
  5 * 3600_000,
  10 * 3600_000,
  14 * 3600_000,
  20 * 3600_000,
  24 * 3600_000,
] as const;
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length;
export const ATTEMPT_TIMEOUT_MS = 15_000;
/** A Retry-After longer than this is not believed (it would outlive the whole schedule). */
export const MAX_RETRY_AFTER_MS = 24 * 3600_000;

/**
 * Parses Retry-After (seconds, or an HTTP date) into milliseconds from `now`; null when absent
 * or unreadable.
 */
export function retryAfterMs(header: string | undefined, now: number): number | null {
  if (!header) return null;
  const t = header.trim();
  if (/^\d+$/.test(t)) return Math.min(Number(t) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(t);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

export type AttemptVerdict =
  | { kind: "delivered" }
  | { kind: "gone" } // 410: the endpoint is disabled
  | { kind: "retry"; at: number }
  | { kind: "failed" }; // the last attempt failed

/**
 * What follows attempt number `attempt` (1-based) that answered `status` (null: no answer):
 * 2xx delivered, 410 gone, otherwise the next attempt after the scheduled delay (times
 * `scale`, with ±10% jitter) or the Retry-After the receiver asked for, whichever is later;
 * after the last attempt, failed.
 */
export function afterAttempt(
  attempt: number,
  status: number | null,
  opts: { now: number; retryAfter?: string; scale?: number; random?: () => number },
): AttemptVerdict {
  if (status !== null && status >= 200 && status < 300) return { kind: "delivered" };
  if (status === 410) return { kind: "gone" };
  if (attempt >= MAX_ATTEMPTS) return { kind: "failed" };
  const jitter = 0.9 + 0.2 * (opts.random ?? Math.random)();
  const scheduled = Math.round(RETRY_SCHEDULE_MS[attempt] * (opts.scale ?? 1) * jitter);
  const asked = retryAfterMs(opts.retryAfter, opts.now) ?? 0;
  return { kind: "retry", at: opts.now + Math.max(scheduled, asked) };
}

/** RECONCILE_WEBHOOK_SCHEDULE_SCALE: a factor for the schedule (tests: 0.001); default 1. */
export function scheduleScale(value: string | undefined): number {
  return numericSetting("RECONCILE_WEBHOOK_SCHEDULE_SCALE", value);
}
