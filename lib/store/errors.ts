import type { Refusal } from "@/lib/domain/trust";

/**
 * Why the store refused something, in the store's own terms: no HTTP status here. lib/api
 * (`knownError` in lib/api/errors.ts) alone decides how each kind is answered.
 */
export type StoreErrorKind =
  /** The input breaks a rule the store keeps: an email, a role, a token's name or scopes. */
  | "invalid_input"
  /** No such user, token or operation (or not one the caller may see). */
  | "not_found"
  /** It contradicts what is stored: a duplicate, the last admin, a stale correction, a conflicting stage. */
  | "conflict"
  /** Someone else holds the operation (details name the holder). */
  | "claimed_by_other"
  /** What is stored forbids it: a disabled owner, a wrong setup code, a scope above the role. */
  | "forbidden"
  /** Too much waits to be written: nothing was stored; try again after `retryAfterSeconds`. */
  | "overloaded"
  /** The database did not answer in time or could not be reached (db/unavailable.ts): nothing is known stored; try again after `retryAfterSeconds`. */
  | "unavailable"
  /** Stored data breaks an invariant the code relies on. */
  | "internal"
  /** The domain's trust rules (lib/domain/trust.ts), decided against what is stored. */
  | Refusal["code"];

export class StoreError extends Error {
  /** How long to wait before trying again (overloaded, unavailable). */
  readonly retryAfterSeconds?: number;
  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    readonly details?: unknown,
    opts: { retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = "StoreError";
    if (opts.retryAfterSeconds !== undefined) this.retryAfterSeconds = opts.retryAfterSeconds;
  }
  /** For logs and thrown messages (demo seeding, benchmarks): what was refused and why. */
  toJSON() {
    return { error: { kind: this.kind, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) } };
  }
}

/** A refusal of the domain's trust rules, as the store reports it. */
export function refused(r: Refusal): StoreError {
  return new StoreError(r.code, r.message, r.details);
}

