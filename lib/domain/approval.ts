import { z } from "zod";
import type { Classification } from "./classify";
import { canonicalJson, sha256Hex } from "./hash";
import { isPlainObject } from "./json";
import { retryDecision, type Idempotency } from "./outcomes";
import { compareInstants, isRfc3339, normalizeInstant } from "./time";

/**
 * Approvals (docs/GATEWAY.md "Approvals in the product"): a risky call is recorded as an intent
 * that asks for approval and is held until a reviewer approves or denies it, or it expires. The
 * request travels in the intent's envelope (`approval`), so it is hashed with the intent and can
 * never be changed; the decision, the expiry and the single use are chained records of kind
 * "approval". Everything here is pure: the store loads the records, this says what they mean.
 */

/** The longest an approval may wait, whatever the request says: nothing stays held forever. */
export const MAX_APPROVAL_WAIT_MS = 7 * 24 * 3600 * 1000;
export const MAX_APPROVAL_REASON = 2000;

export const approvalRequestSchema = z
  .object({
    status: z.literal("pending", { error: 'an approval request says status "pending"' }),
    expires_at: z.string().refine(isRfc3339, { message: "must be an RFC 3339 date-time, e.g. 2026-08-28T14:02:11Z" }),
    /** What held the call, in words a reviewer reads ("/amount > 100"). */
    rule: z.string().min(1).max(500),
    /** The rule's version (a digest of the gateway's configuration of it): an approval binds to it. */
    rule_version: z.string().min(1).max(200),
  })
  .strict();
export type ApprovalRequest = z.infer<typeof approvalRequestSchema>;

export const APPROVAL_DECISIONS = ["approve", "deny"] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

export const approvalDecisionSchema = z
  .object({
    decision: z.enum(APPROVAL_DECISIONS, { error: 'decision must be "approve" or "deny"' }),
    reason: z.string().trim().min(1, "say why, in words").max(MAX_APPROVAL_REASON),
  })
  .strict();
export type ApprovalDecisionRequest = z.infer<typeof approvalDecisionSchema>;

/** The chain payload of an approval record. */
export type ApprovalPayload =
  | { action: "decided"; decision: ApprovalDecision; reason: string; params_digest: string; rule_version: string; intent_seq: number }
  | { action: "expired"; expires_at: string }
  | { action: "used"; params_digest: string };

/** An approval record as replay needs it. */
export type ApprovalFact = ApprovalPayload & { seq: number; recorded_at: string; actor: string | null };

export type ApprovalStatus = "pending" | "approved" | "denied" | "expired";

export type ApprovalState = {
  status: ApprovalStatus;
  rule: string;
  rule_version: string;
  requested_at: string;
  /** When it stops waiting: the request's expiry, at most MAX_APPROVAL_WAIT_MS after it was recorded. */
  expires_at: string;
  /** sha256 of the canonical JSON of the intent's params: what an approval binds to. */
  params_digest: string;
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
  /** An approved call is forwarded once: who took it, and when. */
  used_by: string | null;
  used_at: string | null;
};

/** The digest an approval binds to: the call's arguments as canonical JSON. */
export function paramsDigest(params: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(isPlainObject(params) ? params : {}))}`;
}

/** The envelope's approval request, when it carries a valid one. */
export function approvalRequestOf(envelope: Record<string, unknown>): ApprovalRequest | null {
  const parsed = approvalRequestSchema.safeParse(envelope.approval);
  return parsed.success ? parsed.data : null;
}

function capExpiry(expiresAt: string, requestedAt: string): string {
  const asked = Date.parse(normalizeInstant(expiresAt) ?? "");
  const cap = Date.parse(requestedAt) + MAX_APPROVAL_WAIT_MS;
  return new Date(Number.isNaN(asked) ? cap : Math.min(asked, cap)).toISOString();
}

/**
 * The approval's state from its request (recorded with the intent at `requestedAt`) and its
 * records in chain order. The first decision or expiry settles it; the store refuses any after
 * it, so later ones are never written (and would be ignored here). A use counts only after an
 * approval.
 */
export function deriveApproval(request: ApprovalRequest, requestedAt: string, params: unknown, facts: ApprovalFact[]): ApprovalState {
  const state: ApprovalState = {
    status: "pending",
    rule: request.rule,
    rule_version: request.rule_version,
    requested_at: requestedAt,
    expires_at: capExpiry(request.expires_at, requestedAt),
    params_digest: paramsDigest(params),
    decided_by: null,
    decided_at: null,
    reason: null,
    used_by: null,
    used_at: null,
  };
  for (const f of facts) {
    if (state.status === "pending" && f.action === "decided") {
      state.status = f.decision === "approve" ? "approved" : "denied";
      state.decided_by = f.actor;
      state.decided_at = f.recorded_at;
      state.reason = f.reason;
    } else if (state.status === "pending" && f.action === "expired") {
      state.status = "expired";
      state.decided_at = f.recorded_at;
    } else if (state.status === "approved" && f.action === "used" && state.used_at === null) {
      state.used_by = f.actor;
      state.used_at = f.recorded_at;
    }
  }
  return state;
}

/** Whether a pending approval's time is up at `now` (epoch ms). */
export function isPastExpiry(state: ApprovalState, now: number): boolean {
  return state.status === "pending" && Date.parse(state.expires_at) <= now;
}

/** The call waits for a reviewer and has not gone out: decided in the Approvals tab, not corrected, not in the review queue. */
export function isHeld(approval: Pick<ApprovalState, "status"> | null | undefined, hasReceipt: boolean): boolean {
  return approval?.status === "pending" && !hasReceipt;
}

export const APPROVAL_REASONS = {
  waiting: "waiting for approval",
  expired: (state: ApprovalState) => `no reviewer approved before the approval expired (${state.expires_at})`,
  denied: (state: ApprovalState) => `denied by ${state.decided_by ?? "a reviewer"}: ${state.reason ?? ""}`.trim(),
} as const;

/**
 * What an approval does to the classification while the call has no receipt: a held call is
 * uncertain ("waiting for approval"), a denied or expired one was never sent, so rejected. Once a
 * receipt exists the call went out and the stages decide, as for any call.
 */
export function classifyWithApproval(c: Classification, approval: ApprovalState | null, hasReceipt: boolean, idempotency?: Idempotency): Classification {
  if (!approval || hasReceipt) return c;
  const hold = (outcome: "uncertain" | "rejected", reason: string): Classification => ({ ...c, outcome, reason, failure_category: null, retry: retryDecision(outcome, idempotency) });
  if (isHeld(approval, hasReceipt)) return hold("uncertain", APPROVAL_REASONS.waiting);
  if (approval.status === "denied") return hold("rejected", APPROVAL_REASONS.denied(approval));
  if (approval.status === "expired") return hold("rejected", APPROVAL_REASONS.expired(approval));
  return c;
}

export type ApprovalRefusal = { ok: false; code: "conflict" | "forbidden"; message: string };

/**
 * Whether `reviewer` may decide this approval now (epoch ms). The user whose principal asked for
 * the approval (the operation's owner) may never decide it: a caller must not approve its own call.
 */
export function mayDecide(state: ApprovalState, input: { reviewer: string; owner: string | null; now: number }): { ok: true } | ApprovalRefusal {
  if (input.owner !== null && input.owner === input.reviewer) {
    return { ok: false, code: "forbidden", message: "the call was made with your own account: another reviewer must approve or deny it" };
  }
  if (state.status === "approved" || state.status === "denied") {
    return { ok: false, code: "conflict", message: `already ${state.status} by ${state.decided_by ?? "a reviewer"} at ${state.decided_at}` };
  }
  if (state.status === "expired" || isPastExpiry(state, input.now)) {
    return { ok: false, code: "conflict", message: `the approval expired at ${state.expires_at}; the call was not sent` };
  }
  return { ok: true };
}

/** How long an approval given near (or after) the request's expiry stays usable: a gateway waiting on it needs a moment. */
export const USE_GRACE_MS = 5 * 60 * 1000;

/** Until when an approved call may be forwarded: its request's expiry, or a few minutes after the decision if later. */
export function usableUntil(state: ApprovalState): number {
  return Math.max(Date.parse(state.expires_at), Date.parse(state.decided_at ?? state.expires_at) + USE_GRACE_MS);
}

/**
 * Whether an approved call may be forwarded now with these arguments: once, only the call that
 * was approved (its arguments' digest and, when the gateway names it, the rule's version), and
 * not after the approval has run out.
 */
export function mayUse(state: ApprovalState, input: { digest: string; ruleVersion?: string; now: number }): { ok: true } | ApprovalRefusal {
  if (state.status !== "approved") return { ok: false, code: "conflict", message: `the approval is ${state.status}, not approved` };
  if (state.used_at !== null) return { ok: false, code: "conflict", message: `this approved call was already forwarded (by ${state.used_by ?? "a gateway"} at ${state.used_at})` };
  if (input.digest !== state.params_digest) return { ok: false, code: "conflict", message: "the arguments differ from the call that was approved: a new call needs its own approval" };
  if (input.ruleVersion !== undefined && input.ruleVersion !== state.rule_version) {
    return { ok: false, code: "conflict", message: `the rule that held the call changed (${state.rule_version} → ${input.ruleVersion}): the call needs an approval under the rule in force` };
  }
  if (input.now > usableUntil(state)) return { ok: false, code: "conflict", message: `the approval ran out at ${new Date(usableUntil(state)).toISOString()} without being used: ask again` };
  return { ok: true };
}

/** Oldest first, then by operation: the Approvals tab's order. */
export function compareRequests(a: { requested_at: string; operation_id: string }, b: { requested_at: string; operation_id: string }): number {
  return compareInstants(a.requested_at, b.requested_at) || (a.operation_id < b.operation_id ? -1 : a.operation_id > b.operation_id ? 1 : 0);
}
