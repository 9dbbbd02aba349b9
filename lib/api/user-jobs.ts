import "server-only";
import { ApiError } from "./errors";

/**
 * One heavy job (a full-chain verification or an export started from the UI) at a time per
 * user (TRUST.md "Backpressure"): a second one while the first runs is refused with 429 `busy`.
 * Held in this process's memory: with several instances, a user may run one per instance
 * (docs/DEPLOY.md); a lease row in the database would make it one in all.
 */
const state = globalThis as unknown as { __reconcileUserJobs?: Map<string, string> };
const running = (state.__reconcileUserJobs ??= new Map<string, string>());

/** Takes the user's slot for `job`, or throws 429 `busy` naming what is running. Call the returned release exactly when done. */
export function startUserJob(userId: string, job: string): () => void {
  const current = running.get(userId);
  if (current !== undefined) {
    const error = new ApiError("busy", `${current} you started is still running: one verification or export at a time; try again when it has finished`, { running: current });
    error.retryAfter = 5;
    throw error;
  }
  running.set(userId, job);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    running.delete(userId);
  };
}

/** An async generator that gives the slot back when it ends, fails or is abandoned (return()). */
export async function* releasingWhenDone<T>(source: AsyncGenerator<T>, release: () => void): AsyncGenerator<T> {
  try {
    yield* source;
  } finally {
    release();
  }
}
