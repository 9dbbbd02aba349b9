/*
 * Retention (issue 38 part 2, docs/DEPLOY.md "Retention and archive"): which records of
 * a chain may be sealed into the archive and deleted. Pure: the store gives the records from the
 * chain's current start (the first record not yet sealed) and the operations that must stay.
 *
 * A chain is sealed from its start, so what is sealed is always a contiguous run of seqs and the
 * live chain starts right after the last segment's head. Sealing stops at the first record that
 * may not go: one of an operation that is not archivable (needs review, claimed, awaits
 * approval, or has any record at or after the cut-off, so a whole operation goes or none of it),
 * one at or after the cut-off itself, or one past the last seq a published checkpoint covers.
 */

/** A chain record as retention sees it: its seq, its operation (null: a security event) and when it was recorded. */
export type SealCandidate = { seq: number; operation_id: string | null; recorded_at: string };

export type SealRange = { first_seq: number; last_seq: number; count: number };

/** The most days RECONCILE_RETENTION_DAYS may say (about 273 years). */
export const MAX_RETENTION_DAYS = 99_999;

/** RECONCILE_RETENTION_DAYS: unset or empty keeps everything (null); else whole days, 0 to 99,999. */
export function parseRetentionDays(text: string | undefined): number | null {
  if (text === undefined || text.trim() === "") return null;
  const t = text.trim();
  if (!/^\d{1,5}$/.test(t)) throw new Error(`RECONCILE_RETENTION_DAYS must be a whole number of days (0–${MAX_RETENTION_DAYS}), or unset to keep everything; it is ${JSON.stringify(text)}`);
  return Number(t);
}

/**
 * How long a project keeps its records: its own `retention_days` when set, else the instance's
 * RECONCILE_RETENTION_DAYS; null when neither is set (keep everything).
 */
export function effectiveRetention(own: number | null, instance: number | null): { days: number; from: "project" | "instance" } | null {
  if (own !== null) return { days: own, from: "project" };
  return instance === null ? null : { days: instance, from: "instance" };
}

/** The cut-off: the start (UTC midnight) of the day `days` days before `now`'s. Records before it are old enough. */
export function cutoffOf(now: Date, days: number): string {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(midnight - days * 86_400_000).toISOString();
}

const before = (recordedAt: string, cutoff: string): boolean => {
  const t = Date.parse(recordedAt);
  return Number.isFinite(t) && t < Date.parse(cutoff);
};

/**
 * The sealable prefix of `records` (a chain's records in seq order from its current start): the
 * longest run from the first whose every record is older than `cutoff`, belongs to no operation
 * in `kept`, and is at or below `through` when given. Null when the first record may not go.
 */
export function sealablePrefix(records: SealCandidate[], opts: { kept: ReadonlySet<string>; cutoff: string; through?: number }): SealRange | null {
  let n = 0;
  for (const [i, r] of records.entries()) {
    if (i > 0 && r.seq <= records[i - 1].seq) throw new Error(`sealablePrefix: records must be in seq order (${records[i - 1].seq} then ${r.seq})`);
    if (opts.through !== undefined && r.seq > opts.through) break;
    if (r.operation_id !== null && opts.kept.has(r.operation_id)) break;
    if (!before(r.recorded_at, opts.cutoff)) break;
    n = i + 1;
  }
  return n ? { first_seq: records[0].seq, last_seq: records[n - 1].seq, count: n } : null;
}

/** The first `count` records cut where their UTC day changes: one segment a day, each contiguous in seq. */
export function daySegments(records: SealCandidate[], count: number): (SealRange & { day: string })[] {
  const out: (SealRange & { day: string })[] = [];
  for (const r of records.slice(0, count)) {
    const day = new Date(Date.parse(r.recorded_at)).toISOString().slice(0, 10);
    const last = out[out.length - 1];
    if (last && last.day === day) {
      last.last_seq = r.seq;
      last.count++;
    } else out.push({ day, first_seq: r.seq, last_seq: r.seq, count: 1 });
  }
  return out;
}

/**
 * The last seq retention may seal up to: the largest signed checkpoint that is published, that
 * is, below every checkpoint whose webhook announcement (checkpoint.created) is still waiting for
 * delivery. A checkpoint someone is still to receive must not lose its records first. 0: none.
 */
export function publishedThroughOf(checkpointSizes: number[], undeliveredSizes: number[]): number {
  const firstUndelivered = undeliveredSizes.length ? Math.min(...undeliveredSizes) : Infinity;
  return checkpointSizes.filter((s) => s < firstUndelivered).reduce((a, b) => Math.max(a, b), 0);
}
