import "server-only";
import type { Tx } from "../db/database";
import { writeTransaction } from "../db/db";
import { workingOnInstance } from "../db/project-context";
import { placeholder } from "../db/sql";
import { lockChain } from "./chain";
import { lockInstanceChain } from "./instance-chain";
import { recordSecurityEvent } from "./security-events";

/*
 * Refusals, folded (issue 47). Chaining every refusal let the lowest role grow a trail without
 * bound, each record taken under the trail's lock that sign-in and every people change also take.
 * Now one principal's refusals of one permission fold into one window (REFUSAL_WINDOW_MS, aligned
 * to the clock): the first is chained at once as `authorization.refused` (naming the window's
 * end), the later ones only add to a row of refusal_windows, under no trail lock; once the window
 * has closed with more than one, an `authorization.refusals` record chains its count and first
 * and last time. A principal's refusals beyond its first MAX_PERMISSIONS_PER_WINDOW permissions in
 * a window fold into one window of permission "*". So each principal adds at most
 * 2 × (MAX_PERMISSIONS_PER_WINDOW + 1) records per window to a trail, however many requests it sends.
 *
 * A closed window's tally is chained by the same principal's next refusal that opens a window in
 * the same trail, at most TALLIES_PER_OPENING at a time; until then (for a principal that is not
 * refused again, for good) it is only in refusal_windows. Only the principal's own: another's
 * request never appends records about someone else, so what a request adds stays predictable.
 */
export const REFUSAL_WINDOW_MS = 10 * 60_000;
export const MAX_PERMISSIONS_PER_WINDOW = 8;
const TALLIES_PER_OPENING = 50;
const DAY_MS = 86_400_000;

export type Refusal = { permission: string; method: string; path: string; source: string | null };

/** The end of the window `at` falls in (windows are aligned to the epoch). */
export function refusalWindowEnd(at: Date): string {
  return new Date((Math.floor(at.getTime() / REFUSAL_WINDOW_MS) + 1) * REFUSAL_WINDOW_MS).toISOString();
}

const p = placeholder;

async function bump(tx: Tx, actor: string, permission: string, windowEnd: string, at: string): Promise<boolean> {
  const n = await tx.$executeRawUnsafe(
    `UPDATE refusal_windows SET count = count + 1, last_at = ${p(1)} WHERE actor = ${p(2)} AND permission = ${p(3)} AND window_end = ${p(4)}`,
    at,
    actor,
    permission,
    windowEnd,
  );
  return n === 1;
}

/**
 * Records a refusal of `actor` in the current trail (the instance's under `inInstance`, else the
 * current project's), folded as above. Returns whether it chained a record.
 */
export async function recordRefusal(actor: string, refusal: Refusal, now = new Date()): Promise<boolean> {
  const windowEnd = refusalWindowEnd(now);
  const at = now.toISOString();
  return writeTransaction(async (tx) => {
    // Most refusals of a flood land here: one row's update, no trail lock, nothing chained.
    if (await bump(tx, actor, refusal.permission, windowEnd, at)) return false;
    const [{ n }] = await tx.$queryRawUnsafe<{ n: number | bigint }[]>(`SELECT count(*) AS n FROM refusal_windows WHERE actor = ${p(1)} AND window_end = ${p(2)}`, actor, windowEnd);
    const permission = Number(n) >= MAX_PERMISSIONS_PER_WINDOW ? "*" : refusal.permission;
    if (permission === "*" && (await bump(tx, actor, "*", windowEnd, at))) return false;
    // Opening a window: the trail's lock first, as every append takes it, so that the row and the record go together.
    await (workingOnInstance() ? lockInstanceChain(tx) : lockChain(tx));
    const inserted = await tx.$executeRawUnsafe(
      `INSERT INTO refusal_windows (actor, permission, window_end, first_at, last_at, count, tallied) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, 1, false) ON CONFLICT (actor, permission, window_end) DO NOTHING`,
      actor,
      permission,
      windowEnd,
      at,
      at,
    );
    // Another transaction opened it meanwhile (PostgreSQL: this one waited for it to commit).
    if (inserted !== 1) {
      await bump(tx, actor, permission, windowEnd, at);
      return false;
    }
    await chainTallies(tx, actor, at);
    await recordSecurityEvent(tx, actor, { type: "authorization.refused", permission: refusal.permission, method: refusal.method, path: refusal.path, until: windowEnd, source: refusal.source });
    return true;
  });
}

/** Chains the tallies of the principal's closed windows that held more than one refusal, and forgets windows a day old. */
async function chainTallies(tx: Tx, actor: string, now: string): Promise<void> {
  const closed = await tx.$queryRawUnsafe<{ actor: string; permission: string; window_end: string; first_at: string; last_at: string; count: number | bigint }[]>(
    `SELECT actor, permission, window_end, first_at, last_at, count FROM refusal_windows WHERE actor = ${p(1)} AND tallied = false AND window_end <= ${p(2)} AND count > 1 ORDER BY window_end, permission LIMIT ${TALLIES_PER_OPENING}`,
    actor,
    now,
  );
  for (const w of closed) {
    await tx.$executeRawUnsafe(`UPDATE refusal_windows SET tallied = true WHERE actor = ${p(1)} AND permission = ${p(2)} AND window_end = ${p(3)}`, w.actor, w.permission, w.window_end);
    await recordSecurityEvent(tx, w.actor, { type: "authorization.refusals", permission: w.permission, count: Number(w.count), first_at: w.first_at, last_at: w.last_at, until: w.window_end });
  }
  const dayAgo = new Date(Date.parse(now) - DAY_MS).toISOString();
  await tx.$executeRawUnsafe(`DELETE FROM refusal_windows WHERE window_end < ${p(1)} AND (tallied OR count = 1)`, dayAgo);
}
