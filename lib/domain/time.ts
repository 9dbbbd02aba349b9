import { NUMERIC_SETTINGS, numericSetting } from "./settings";

/**
 * RFC 3339 timestamps compared exactly. `Date.parse` keeps only milliseconds, so two reads a
 * few microseconds apart would tie; the classification rules ("at or after the receipt") need
 * the full precision the client sent.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

export function isRfc3339(value: string): boolean {
  return toInstant(value) !== null;
}

/** Parsed instants: a record's few timestamps are compared many times while it is classified. */
const instants = new Map<string, bigint | null>();

/** Nanoseconds since the epoch, or null when the text is not an RFC 3339 date-time. */
export function toInstant(value: string): bigint | null {
  let n = instants.get(value);
  if (n === undefined) {
    if (instants.size >= 4096) instants.clear();
    n = parseInstant(value);
    instants.set(value, n);
  }
  return n;
}

function parseInstant(value: string): bigint | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac = "", zone] = m;
  const whole = `${y}-${mo}-${d}T${h}:${mi}:${s}${zone.toUpperCase() === "Z" ? "Z" : zone}`;
  const ms = Date.parse(whole);
  if (Number.isNaN(ms)) return null;
  // Date.parse accepts 2026-02-30; round-tripping the calendar date rejects it.
  const local = new Date(Date.UTC(+y, +mo - 1, +d, +h, +mi, +s));
  if (local.getUTCDate() !== +d || local.getUTCMonth() !== +mo - 1 || +h > 23 || +mi > 59 || +s > 59) {
    return null;
  }
  return BigInt(ms) * 1_000_000n + BigInt(frac.padEnd(9, "0"));
}

/** -1, 0 or 1, like a comparator. Both values must be valid RFC 3339 texts. */
export function compareInstants(a: string, b: string): number {
  const x = toInstant(a);
  const y = toInstant(b);
  if (x === null || y === null) throw new Error("compareInstants: not an RFC 3339 date-time");
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The UTC millisecond form used for storage and range filters ("2026-08-28T14:02:11.000Z"). */
const MIN_MS = Date.parse("0000-01-01T00:00:00.000Z");
const MAX_MS = Date.parse("9999-12-31T23:59:59.999Z");

export function normalizeInstant(value: string): string | null {
  const n = toInstant(value);
  if (n === null) return null;
  // A four-digit year with an offset can land outside years 0000–9999 in UTC, where
  // toISOString() writes "+010000-…" or "-000001-…", which sort wrongly as text. Clamp to the
  // first or last millisecond of that range: as a range bound it selects exactly the same records.
  const ms = Math.min(Math.max(Number(n / 1_000_000n), MIN_MS), MAX_MS);
  return new Date(ms).toISOString();
}

/** A stored instant as people read it: "2026-08-28 14:02:11 UTC", or "… 14:02:11.675 UTC" when the milliseconds say something. */
export function displayUtc(t: string): string {
  return t.replace("T", " ").replace(/\.000Z$|Z$/, " UTC");
}

/**
 * How long ago `t` was, as people say it: "just now", "42 s ago", "5 min ago", "3 h ago",
 * "2 d ago", "3 mo ago", "2 y ago" (floored; "in 5 min" for a time ahead of `now`).
 */
export function relativeAge(t: string, now: number): string {
  const ms = now - Date.parse(t);
  if (!Number.isFinite(ms)) return "";
  const ahead = ms < 0;
  const s = Math.floor(Math.abs(ms) / 1000);
  let text: string;
  if (s < 5) return "just now";
  else if (s < 60) text = `${s} s`;
  else if (s < 3600) text = `${Math.floor(s / 60)} min`;
  else if (s < 86_400) text = `${Math.floor(s / 3600)} h`;
  else if (s < 86_400 * 60) text = `${Math.floor(s / 86_400)} d`;
  else if (s < 86_400 * 730) text = `${Math.floor(s / (86_400 * 30))} mo`;
  else text = `${Math.floor(s / (86_400 * 365))} y`;
  return ahead ? `in ${text}` : `${text} ago`;
}

/** The default age past which a review item is flagged as old (RECONCILE_REVIEW_AGE_HOURS). */
export const DEFAULT_REVIEW_AGE_HOURS = NUMERIC_SETTINGS.RECONCILE_REVIEW_AGE_HOURS.default;

/** The review age threshold from its setting: a positive number of hours; unset, the default (settings.ts). */
export function reviewAgeHours(setting: string | undefined): number {
  return numericSetting("RECONCILE_REVIEW_AGE_HOURS", setting);
}

/** Whether an item dated `t` is older than `hours` at `now`. */
export function olderThan(t: string, hours: number, now: number): boolean {
  const at = Date.parse(t);
  return Number.isFinite(at) && now - at > hours * 3_600_000;
}

/**
 * A form's date field, as people type it: a plain day (`2026-11-01`) is that day's start in UTC
 * (`2026-11-01T00:00:00Z`); any other text is left as it is, for the filters' own check to judge.
 */
export function dayOrInstant(value: string): string {
  const v = value.trim();
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return value;
  const at = `${v}T00:00:00Z`;
  return isRfc3339(at) ? at : value;
}
