import "server-only";
import { randomUUID } from "node:crypto";
import { instanceWriteTransaction as writeTransaction } from "../db/db";
import { asSql, placeholder as ph, type Sql } from "../db/sql";

/**
 * One heavy job (a full-chain verification, or an export started from the UI) at a time per
 * user, across every instance on one database (TRUST.md "Backpressure"): a lease row per user.
 * Taking it succeeds when there is none or the one there has run out (its instance died without
 * ending it); the holder renews it while the job runs and deletes it when the job ends.
 */

/** A write transaction, as raw SQL (the statements below are the same on both databases). */
const write = <T>(fn: (tx: Sql) => Promise<T>) => writeTransaction((tx) => fn(asSql(tx)));

/** The user's lease: `held`, with this lease's token, or not, naming the job already running. */
export type LeaseTaken = { held: true; holder: string } | { held: false; running: string };

export async function takeUserJobLease(userId: string, job: string, ms: number, now = Date.now()): Promise<LeaseTaken> {
  const holder = randomUUID();
  const row = await write(async (tx) => {
    // Inserted, or taken over when the lease there has run out; otherwise left as it is.
    await tx.run(
      `INSERT INTO user_job_leases (user_id, job, holder, lease_until) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)})
       ON CONFLICT (user_id) DO UPDATE SET job = excluded.job, holder = excluded.holder, lease_until = excluded.lease_until
       WHERE user_job_leases.lease_until < ${ph(5)}`,
      [userId, job, holder, now + ms, now],
    );
    const [current] = await tx.all<{ job: string; holder: string }>(`SELECT job, holder FROM user_job_leases WHERE user_id = ${ph(1)}`, [userId]);
    return current;
  });
  return row?.holder === holder ? { held: true, holder } : { held: false, running: row?.job ?? job };
}

/** Extends the holder's lease by `ms` from now; false when it is no longer the holder's. */
export async function renewUserJobLease(userId: string, holder: string, ms: number, now = Date.now()): Promise<boolean> {
  return write(async (tx) => {
    const rows = await tx.all<{ user_id: string }>(
      `UPDATE user_job_leases SET lease_until = ${ph(1)} WHERE user_id = ${ph(2)} AND holder = ${ph(3)} RETURNING user_id`,
      [now + ms, userId, holder],
    );
    return rows.length > 0;
  });
}

/** Ends the holder's lease (nothing when it was taken over meanwhile). */
export async function endUserJobLease(userId: string, holder: string): Promise<void> {
  await write((tx) => tx.run(`DELETE FROM user_job_leases WHERE user_id = ${ph(1)} AND holder = ${ph(2)}`, [userId, holder]));
}
