/**
 * When to start an upstream again (docs/GATEWAY.md "Restarts"): 1 s after the first failure,
 * doubling to at most 30 s; a server that stayed up a minute starts again from 1 s. Pure: the
 * caller passes the clock.
 */
export const FIRST_DELAY_MS = 1_000;
export const MAX_DELAY_MS = 30_000;
export const RESET_AFTER_MS = 60_000;

/** The wait before the next start after `failures` failures in a row (0: the first). */
export function restartDelay(failures: number): number {
  return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(failures, 10));
}

export class Backoff {
  /** Failures in a row (a failed start, or an exit before a minute up). */
  failures = 0;
  private upSince: number | null = null;

  /** The server is up (connected) from `now`. */
  up(now: number): void {
    this.upSince = now;
  }

  /** It went down, or a start failed, at `now`: how long to wait before the next start. */
  down(now: number): number {
    if (this.upSince !== null && now - this.upSince >= RESET_AFTER_MS) this.failures = 0;
    this.upSince = null;
    return restartDelay(this.failures++);
  }
}
