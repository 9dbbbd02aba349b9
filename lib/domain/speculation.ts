import type { ChainHead } from "./chains";

/*
 * When a group decided before the chain lock may be stored as decided (lib/store/ingest/speculation.ts
 * has the whole design). What deciding reads changes only by appends to the chain, and a head
 * (seq and hash) names one state of it: a basis read in a snapshot whose head is H is current
 * while the chain's head is H.
 */

/** What a lane's transaction wrote: the head it found, the head it leaves if it commits, the operations it named. */
export type Written = { start: ChainHead; end: ChainHead; ids: ReadonlySet<string> };

/** The same head: seq and hash (a seq alone could be another instance's record). */
export const sameHead = (a: ChainHead, b: ChainHead): boolean => a.seq === b.seq && a.hash === b.hash;

/**
 * The head a group decided against a snapshot whose head is `seen` must find under the lock to
 * be stored as decided, or null when the group may not be decided ahead. `before` is the lane's
 * previous transaction, which may still be committing: a snapshot that shows its start was taken
 * before its records were visible, so they are expected in between, and none of its operations
 * may be the group's.
 */
export function predictHead(seen: ChainHead, ids: readonly string[], before: Written | null): ChainHead | null {
  if (!before || !sameHead(seen, before.start) || sameHead(before.start, before.end)) return seen;
  for (const id of ids) if (before.ids.has(id)) return null;
  return before.end;
}

/**
 * A group smaller than this is decided under the lock: its deciding costs less than the
 * snapshot's round trips (single records, 16 to a group, were slower guessed).
 */
export const MIN_GUESSED_RECORDS = 50;
/** Misses in a row after which a lane stops guessing every group: something else appends to its chain (a second instance). */
export const MISSES_BEFORE_BACKING_OFF = 3;
/** While backed off, one group in this many is guessed, to notice when the other writer has gone. */
export const PROBE_EVERY = 8;

/**
 * Whether a lane decides its next group ahead. A guess that misses is decided again under the
 * lock: the work is done twice, so a lane whose guesses keep missing guesses only now and then
 * until one holds.
 */
export class GuessPolicy {
  private misses = 0;
  private skipped = 0;

  shouldGuess(records: number): boolean {
    if (records < MIN_GUESSED_RECORDS) return false;
    if (this.misses < MISSES_BEFORE_BACKING_OFF) return true;
    if (++this.skipped < PROBE_EVERY) return false;
    this.skipped = 0;
    return true;
  }

  heard(outcome: "held" | "missed"): void {
    if (outcome === "held") this.misses = this.skipped = 0;
    else this.misses++;
  }
}
