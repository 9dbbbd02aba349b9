import { isPlainObject } from "./json";
import { NUMERIC_SETTINGS, numericSetting } from "./settings";
import { toInstant } from "./time";

/**
 * Who may write what on an operation (docs/API.md "Who may write what"), as pure rules over
 * one ingest record. The store applies them inside the ingest transaction, where the owner of
 * an operation is known; the API applies the ones that need no database before queueing.
 */

/** At most this many canonical reads per operation, in total. */
export const MAX_READS_PER_OPERATION = 1000;
/** How far after the server's clock an observation may claim to be, by default (seconds). */
export const DEFAULT_MAX_CLOCK_SKEW_SECONDS = NUMERIC_SETTINGS.RECONCILE_MAX_CLOCK_SKEW.default;

/**
 * Who sent a stage record: a user through a token or a session, or the system (the demo data,
 * named by `name`). Kept in the chained payload, so it is as tamper-evident as the stage.
 */
export type SentBy = {
  /** "unrecorded": stored before senders were kept; only the chain's actor is known. */
  via: "token" | "session" | "system" | "unrecorded";
  user_id: string | null;
  email: string | null;
  token_id: string | null;
  token_name: string | null;
  name?: string;
};

/** What the sender may do, as far as these rules care. */
export type WriteRights = {
  userId: string | null;
  /** Holds the ingest permission (scope `ingest`). */
  mayIngest: boolean;
  /** Holds the verify permission (scope `verify`, role reviewer or above). */
  mayVerify: boolean;
  isAdmin: boolean;
};

/** A record's sender as ingest needs it: the chain's actor, who sent it, and what they may do. */
export type Sender = { actor: string; sent_by: SentBy; rights: WriteRights };

/** The system itself (demo data, benchmarks' seeding): may write anything. */
export function systemSender(name: string): Sender {
  return {
    actor: name,
    sent_by: { via: "system", user_id: null, email: null, token_id: null, token_name: null, name },
    rights: { userId: null, mayIngest: true, mayVerify: true, isAdmin: true },
  };
}

/** Records stored before senders were kept name only the chain's actor (an email, or "demo"). */
export function legacySentBy(actor: string | null): SentBy {
  const email = actor && actor.includes("@") ? actor : null;
  return { via: "unrecorded", user_id: null, email, token_id: null, token_name: null, ...(email ? {} : { name: actor ?? "unknown" }) };
}

/** A refusal in the domain's terms: lib/api alone decides the HTTP answer (403 or 422) from the code. */
export type Refusal = {
  code: "forbidden" | "verify_scope_required" | "not_operation_owner" | "observed_in_future" | "too_many_reads";
  message: string;
  details?: unknown;
};

/** How many canonical reads a record carries. */
export function readsIn(raw: Record<string, unknown>): number {
  const r = raw.canonical_read;
  if (r === undefined) return 0;
  return Array.isArray(r) ? r.length : 1;
}

/** Whether the record writes only canonical reads and side effects (nothing of the agent's own). */
function onlyObservations(raw: Record<string, unknown>): boolean {
  for (const key of Object.keys(raw)) {
    if (key === "operation_id" || key === "canonical_read" || key === "side_effects") continue;
    return false;
  }
  return true;
}

/**
 * The scopes a record needs: canonical reads decide the outcome, so only a verifier may send
 * them; intent, receipt and envelope fields are the agent's own account and need `ingest`;
 * side effects are observations either may report.
 */
export function scopeRefusal(raw: Record<string, unknown>, rights: WriteRights): Refusal | null {
  if (readsIn(raw) > 0 && !rights.mayVerify) {
    return {
      code: "verify_scope_required",
      message: "canonical reads decide the outcome: sending one needs a token with the verify scope (owner reviewer or admin); nothing of this record was stored",
    };
  }
  if (!rights.mayIngest && !onlyObservations(raw)) {
    return {
      code: "forbidden",
      message: "this token may send canonical reads and side effects only: an intent, a receipt or envelope fields need the ingest scope; nothing of this record was stored",
    };
  }
  return null;
}

/**
 * Writing to an operation another user created: allowed to an admin, and to a verifier for
 * canonical reads and side effects; anything else is refused. `owner` is the creating user's
 * id (null for operations created by the system, such as the demo data).
 */
export function ownershipRefusal(raw: Record<string, unknown>, owner: string | null, rights: WriteRights): Refusal | null {
  if (rights.isAdmin) return null;
  if (owner !== null && owner === rights.userId) return null;
  if (rights.mayVerify && onlyObservations(raw)) return null;
  return {
    code: "not_operation_owner",
    message: rights.mayVerify
      ? "this operation was created by another user: a verifier may add canonical reads and side effects only; nothing of this record was stored"
      : "this operation was created by another user: only that user's tokens, a verifier or an admin may add to it; nothing of this record was stored",
  };
}

/** The stage times of a record, with their paths. */
function observedTimes(raw: Record<string, unknown>): { path: string; value: string }[] {
  const out: { path: string; value: string }[] = [];
  const at = (v: unknown, path: string) => {
    if (isPlainObject(v) && typeof v.observed_at === "string") out.push({ path: `${path}.observed_at`, value: v.observed_at });
  };
  at(raw.receipt, "receipt");
  const reads = raw.canonical_read;
  if (Array.isArray(reads)) reads.forEach((r, i) => at(r, `canonical_read[${i}]`));
  else at(reads, "canonical_read");
  return out;
}

/**
 * An observation dated more than `skewSeconds` after the server's clock is refused: a read
 * dated in the future would stay the latest read for ever, and no real read could decide again.
 */
export function futureRefusal(raw: Record<string, unknown>, nowMs: number, skewSeconds: number): Refusal | null {
  const limit = BigInt(nowMs + skewSeconds * 1000) * 1_000_000n;
  const late = observedTimes(raw).filter((t) => {
    const n = toInstant(t.value);
    return n !== null && n > limit;
  });
  if (!late.length) return null;
  return {
    code: "observed_in_future",
    message: `${late[0].path} is ${late[0].value}, more than ${skewSeconds} s after the server's clock (${new Date(nowMs).toISOString()}); nothing of this record was stored`,
    details: { fields: late.map((t) => t.path), server_time: new Date(nowMs).toISOString(), max_clock_skew_seconds: skewSeconds },
  };
}

/** Past the per-operation cap of canonical reads. `held` is how many the operation already has. */
export function readCapRefusal(held: number, adding: number): Refusal | null {
  if (held + adding <= MAX_READS_PER_OPERATION) return null;
  return {
    code: "too_many_reads",
    message: `an operation may hold at most ${MAX_READS_PER_OPERATION} canonical reads; it has ${held} and this record adds ${adding}; nothing of this record was stored`,
    details: { max_reads: MAX_READS_PER_OPERATION, held, adding },
  };
}

/** RECONCILE_MAX_CLOCK_SKEW as seconds (a non-negative number), or the default (settings.ts). */
export function clockSkewSeconds(value: string | undefined): number {
  return numericSetting("RECONCILE_MAX_CLOCK_SKEW", value);
}
