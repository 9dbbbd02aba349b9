/**
 * The wire format this client sends (the server's docs/DOMAIN.md "Wire format"), as far as the
 * client needs to name it. Unknown fields are allowed everywhere: the server keeps them verbatim.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Open = { [key: string]: unknown };

export type Named = string | ({ name?: string; version?: string } & Open);

export type IntentFields = {
  target?: string;
  effect?: string;
  /** e.g. "sha256:<normalized content>": compared with the canonical read's evidence fingerprint. */
  fingerprint?: string;
  params?: Record<string, unknown>;
  relied_on?: unknown;
} & Open;

export type ReceiptFields = {
  status: "accepted" | "rejected";
  /** RFC 3339; the client fills in the time it observed the answer when left out. */
  observed_at?: string;
  receipt_id?: string | null;
  tool?: Named | null;
  params?: Record<string, unknown> | null;
  raw?: unknown;
  effects?: unknown[] | null;
  environment?: Record<string, unknown> | null;
  preconditions_checked?: unknown[] | null;
  partial?: boolean | null;
} & Open;

/** What a guard's `receipt` option may add to the receipt it records (not its status or time). */
export type ReceiptExtras = Omit<ReceiptFields, "status" | "observed_at">;

export type Evidence = string | ({ object_id?: string | null; fingerprint?: string | null; url?: string | null } & Open);

export type CanonicalReadFields = {
  status: "match" | "absent" | "mismatch" | "unavailable";
  /** RFC 3339; the client fills in the time the read finished when left out. */
  observed_at?: string;
  evidence?: Evidence | null;
  reader?: Record<string, unknown> | null;
} & Open;

export type SideEffect = { name: string; status: "observed" | "not_observed" | "unknown" } & Open;

export type Idempotency = { enforced?: boolean | null; key?: string | null } & Open;

/** One operation record as `record()` takes it: `operation_id` and at least one stage. */
export type OperationRecord = {
  operation_id: string;
  trajectory_id?: string | null;
  depends_on?: string[] | null;
  agent?: Named | null;
  tool?: Named | null;
  claimed_outcome?: string | null;
  intent?: IntentFields;
  receipt?: ReceiptFields;
  canonical_read?: CanonicalReadFields | CanonicalReadFields[];
  side_effects?: SideEffect[];
  idempotency?: Idempotency | null;
} & Open;

/** The answer of `mayRetry`: the server's retry decision for the operation's effective outcome. */
export type RetryGate = {
  /** True only when the server's decision says an automatic retry is allowed. */
  allowed: boolean;
  /** The server's decision in words, or why the client could not get one. */
  reason: string;
  /** A reviewed replay with the operation's enforced idempotency key would be safe. Never a licence to retry by itself. */
  safe_replay_available: boolean;
  /** The operation's idempotency key, when it has one. */
  key?: string;
  /** The operation's effective outcome, when the server answered. */
  outcome?: string;
};

/** The answer of `readOperation`: the server's operation (its JSON), or why there is none. */
/** What an agent was told about an operation, one attempt (docs/API.md "Attempts"). */
export type AttemptFields = {
  answer: "forwarded" | "verdict" | "replayed" | "refused" | "waiting" | "fate_unknown" | "not_sent";
  /** What the agent was told, in words (at most 4,000 characters). */
  text: string;
  outcome?: string;
  /** RFC 3339; the record's own time when absent. */
  at?: string;
  session?: string;
  client?: { name: string; version?: string };
};

export type OperationRead =
  | { kind: "found"; body: unknown }
  | { kind: "missing"; /** Records for it are still queued here. */ unsent: boolean }
  | { kind: "refused"; status: number; code: string; message: string }
  | { kind: "unreachable"; error: string };

/** Something the client could not deliver, or is still trying to: for `onEvent`. */
export type ClientEvent =
  | { kind: "rejected"; operation_id: string; status: number; code: string; message: string }
  | { kind: "dropped"; operation_id: string; reason: "queue_full" | "too_large" | "closed" | "withdrawn" }
  | { kind: "retrying"; records: number; status: number | null; error: string; delay_ms: number }
  | { kind: "read_failed"; operation_id: string; status: number | null; error: string };

/** Counters since the client was made (`rc.stats()`). Every record ends in exactly one of delivered, rejected, dropped, or is still queued. */
export type ClientStats = {
  /** Records in memory now (waiting or in flight) and their size in bytes. */
  queued: number;
  queued_bytes: number;
  /** The most ever held at once: never above the bounds. */
  peak_queued: number;
  peak_queued_bytes: number;
  /** Stored by the server (or already there: a duplicate). */
  delivered: number;
  /** Refused by the server for good (a 4xx other than 429): sending again would not help. */
  rejected: number;
  /** Never sent: the queue stayed full, the record was too large, or the client was closed. */
  dropped: number;
  /** Requests that failed with 429, 5xx or a network error and were tried again. */
  retries: number;
};

/** An approval as the server holds it (docs/API.md "Approvals"): the operation's `approval`. */
export type Approval = {
  status: "pending" | "approved" | "denied" | "expired";
  rule?: string;
  rule_version?: string | null;
  requested_at: string;
  expires_at: string;
  params_digest?: string;
  decided_by?: string | null;
  decided_at?: string | null;
  reason?: string | null;
  used_by?: string | null;
  used_at?: string | null;
} & Open;

/**
 * The answer of `approval()` and `useApproval()`: the approval, or why there is none. `refused`
 * is the server's answer (any status but the one asked for; `status` says whether sending again
 * could help), `unreachable` is no answer (a network error or timeout).
 */
export type ApprovalAnswer =
  | { kind: "found"; approval: Approval }
  | { kind: "refused"; status: number; code: string; message: string }
  | { kind: "unreachable"; error: string };
