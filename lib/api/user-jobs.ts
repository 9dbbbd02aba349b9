import "server-only";
import { endUserJobLease, renewUserJobLease, takeUserJobLease } from "@/lib/store/people/job-leases";
import { ApiError } from "./errors";

/**
 * One heavy job (a full-chain verification or an export started from the UI) at a time per
 * user (TRUST.md "Backpressure"), across every instance on the database: a second one while the
 * first runs is refused with 429 `busy`. The slot is a lease row (lib/store/people/job-leases.ts)
 * renewed while the job runs; if its instance dies, it runs out after LEASE_MS.
 */
export const LEASE_MS = 60_000;

/** Takes the user's slot for `job`, or throws 429 `busy` naming what is running. Call the returned release exactly when done. */
export async function startUserJob(userId: string, job: string): Promise<() => Promise<void>> {
  const taken = await takeUserJobLease(userId, job, LEASE_MS);
  if (!taken.held) {
    const error = new ApiError("busy", `${taken.running} you started is still running: one verification or export at a time; try again when it has finished`, { running: taken.running });
    error.retryAfter = 5;
    throw error;
  }
  const renew = setInterval(() => void renewUserJobLease(userId, taken.holder, LEASE_MS).catch(() => {}), LEASE_MS / 3);
  renew.unref();
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    clearInterval(renew);
    // A lease that could not be ended (the database gone meanwhile) runs out by itself.
    await endUserJobLease(userId, taken.holder).catch(() => {});
  };
}

/** An async generator that gives the slot back when it ends, fails or is abandoned (return()). */
export async function* releasingWhenDone<T>(source: AsyncGenerator<T>, release: () => Promise<void>): AsyncGenerator<T> {
  try {
    yield* source;
  } finally {
    await release();
  }
}
