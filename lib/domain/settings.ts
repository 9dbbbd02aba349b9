/**
 * The numeric settings of the environment: each one's default and what a value must be. The
 * production server checks them all when it starts (lib/cli/serve.ts) and refuses to start on
 * any that means nothing, naming every one, instead of falling back to a default silently or
 * failing requests later; each place that uses a setting reads it through envSetting, so
 * the check at start and the use agree. Unset or blank is the default. docs/DEPLOY.md, "Settings".
 */

type Rule = { default: number; integer?: boolean; min: number; minExclusive?: boolean; max?: number; unit?: string };

export const NUMERIC_SETTINGS = {
  /** The port the server listens on (0: any free one). */
  PORT: { default: 3000, integer: true, min: 0, max: 65_535 },
  /** How long an idle keep-alive connection stays open (Node.js's default). */
  KEEP_ALIVE_TIMEOUT_MS: { default: 5000, min: 0, unit: "milliseconds" },
  /** Connections of the Prisma pool, on PostgreSQL. */
  DATABASE_POOL_SIZE: { default: 10, integer: true, min: 1 },
  /** Connections of the ingest pool, on PostgreSQL (lib/store/db/pg-direct.ts). */
  DATABASE_INGEST_POOL_SIZE: { default: 4, integer: true, min: 1 },
  /**
   * PostgreSQL: how long the app waits for one query's answer before it gives the connection up
   * (destroyed, the database rolls back) and answers 503 (lib/store/db/pg-deadline.ts). Bounds a
   * request when the network to the database black-holes or the database stalls.
   */
  DATABASE_QUERY_TIMEOUT_MS: { default: 10_000, min: 0, minExclusive: true, unit: "milliseconds" },
  /** PostgreSQL: how long the app waits for a new connection, or a free one of the pool, before answering 503. */
  DATABASE_CONNECT_TIMEOUT_MS: { default: 5000, min: 0, minExclusive: true, unit: "milliseconds" },
  /** Hash chains of a new database, fixed when it is first used (docs/AUDIT.md, "Several chains"). */
  RECONCILE_CHAINS: { default: 1, integer: true, min: 1, max: 64 },
  /** Records waiting for the ingest transaction past which a request is refused with 429 (lib/store/ingest/queue.ts). */
  RECONCILE_INGEST_QUEUE_MAX: { default: 20_000, integer: true, min: 1 },
  /** While a request a person waits on is in flight, the slice long work (ingest above all) runs in before the next turn; 0: off (lib/store/db/priority.ts). */
  RECONCILE_INTERACTIVE_SLICE_MS: { default: 4, min: 0, max: 1000, unit: "milliseconds" },
  /** How far an observed_at may be ahead of the server's clock (TRUST.md). */
  RECONCILE_MAX_CLOCK_SKEW: { default: 300, min: 0, unit: "seconds" },
  /** The first wait before a failed verifier check is tried again; it doubles, up to a minute. */
  RECONCILE_VERIFIER_RETRY_MS: { default: 1000, min: 0, minExclusive: true, unit: "milliseconds" },
  /** A verifier's whole exchange's deadline (VERIFIERS.md). */
  RECONCILE_VERIFIER_TIMEOUT_MS: { default: 10_000, min: 0, minExclusive: true, unit: "milliseconds" },
  /** Verifier checks one instance runs at once. */
  RECONCILE_VERIFIER_CONCURRENCY: { default: 32, integer: true, min: 1 },
  /** Verifier check results committed in one transaction at most (1: each its own, at once; lib/verifiers/commit.ts). */
  RECONCILE_VERIFIER_GROUP: { default: 200, integer: true, min: 1 },
  /**
   * How long a claimed background job is its instance's before another may take it over (when
   * the instance died mid-job): longer than any job takes (a verifier's deadline, a webhook
   * attempt's 15 s), or a slow job is run twice (its result is still recorded once).
   */
  RECONCILE_JOB_LEASE_MS: { default: 60_000, min: 1000, unit: "milliseconds" },
  /** Webhook deliveries one instance makes at once. */
  RECONCILE_WEBHOOK_CONCURRENCY: { default: 32, integer: true, min: 1 },
  /** A factor on the webhook retry schedule (tests run it fast); 1 is the schedule of WEBHOOKS.md. */
  RECONCILE_WEBHOOK_SCHEDULE_SCALE: { default: 1, min: 0 },
  /** How long a rotated webhook secret still signs (a second signature) when the rotation names no overlap_hours. */
  RECONCILE_WEBHOOK_SECRET_OVERLAP_HOURS: { default: 24, min: 0, max: 168, unit: "hours" },
  /** The deadline of one verdict export request, the OpenTelemetry exporter's own retries within it (lib/verdicts/). */
  RECONCILE_VERDICT_OTLP_TIMEOUT_MS: { default: 10_000, min: 0, minExclusive: true, unit: "milliseconds" },
  /** Verdict export requests one instance makes at once (each carries up to 500 events). */
  RECONCILE_VERDICT_CONCURRENCY: { default: 4, integer: true, min: 1 },
  /** The age past which the review queue flags an item as old. */
  RECONCILE_REVIEW_AGE_HOURS: { default: 24, min: 0, minExclusive: true, unit: "hours" },
} satisfies Record<string, Rule>;

export type NumericSetting = keyof typeof NUMERIC_SETTINGS;

/** What a value of this setting must be, in words: "a whole number ≥ 1", "a number of seconds ≥ 0". */
function expected(rule: Rule): string {
  const what = rule.integer ? "a whole number" : rule.unit ? `a number of ${rule.unit}` : "a number";
  if (rule.max !== undefined) return `${what} from ${rule.min} to ${rule.max}`;
  return `${what} ${rule.minExclusive ? ">" : "≥"} ${rule.min}`;
}

/** The setting's value from its text (unset or blank: the default); a value that means nothing throws, naming the setting. */
export function numericSetting(name: NumericSetting, value: string | undefined): number {
  const rule: Rule = NUMERIC_SETTINGS[name];
  if (value === undefined || value.trim() === "") return rule.default;
  const text = value.trim();
  // Decimal notation only: Number() would also take "0x10", "Infinity" and "1e400".
  const n = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : NaN;
  const ok = Number.isFinite(n) && (rule.minExclusive ? n > rule.min : n >= rule.min) && (rule.max === undefined || n <= rule.max) && (!rule.integer || Number.isInteger(n));
  if (!ok) throw new Error(`${name} must be ${expected(rule)}, not ${JSON.stringify(value)}`);
  return n;
}

/** Every numeric setting in `env` that means nothing, as the message numericSetting throws. */
export function settingProblems(env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(NUMERIC_SETTINGS) as NumericSetting[]) {
    try {
      numericSetting(name, env[name]);
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  return problems;
}

/** The setting's value from this process's environment: what the code that uses a setting calls. */
export function envSetting(name: NumericSetting): number {
  return numericSetting(name, process.env[name]);
}
