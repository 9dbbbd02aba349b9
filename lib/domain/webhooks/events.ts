import type { CorrectionAction, Resolution } from "../corrections";
import type { OperationState } from "../operation";
import type { EffectiveOutcome, FailureCategory, RetryDecision } from "../outcomes";

/**
 * Webhook events (docs/API.md "Webhooks"), derived purely from what a write changed.
 * Storage calls these inside the write's own transaction and keeps the result in the outbox,
 * so an event exists exactly when its cause committed.
 */
export const WEBHOOK_EVENT_TYPES = [
  "operation.needs_review",
  "operation.verdict_changed",
  "correction.created",
  "checkpoint.created",
  "chain.verification_failed",
  "approval.requested",
  "approval.decided",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** "Send a test event": delivered to the one endpoint asked, whatever its filters. */
export const TEST_EVENT_TYPE = "webhook.test";
export type AnyEventType = WebhookEventType | typeof TEST_EVENT_TYPE;

/** The outcomes that need a person. */
const NEEDS_REVIEW: ReadonlySet<EffectiveOutcome> = new Set(["uncertain", "divergent"]);

/** What endpoint filters look at; not part of the body. Null for events about no operation. */
export type EventFacets = { tool: string | null; agent: string | null; outcome: EffectiveOutcome | null };

export type WebhookEvent = {
  type: AnyEventType;
  /** RFC 3339: when the change it announces was recorded. */
  timestamp: string;
  data: Record<string, unknown>;
  facets: EventFacets;
  /** The page that shows what it is about (absolute when a public URL is known). */
  link: string;
  operationId: string | null;
};

/** Who or what changed an operation's effective outcome. */
export type ChangeCause =
  | { kind: "stage"; stage: string; seq: number; by: string | null }
  | { kind: "correction"; action: CorrectionAction; correction_id: string; seq: number; by: string }
  | { kind: "approval"; action: "decided" | "expired"; seq: number; by: string | null };

/** One operation's effective outcome before and after one committed write. */
export type OutcomeChange = {
  operationId: string;
  /** Null when this write created the operation. */
  before: EffectiveOutcome | null;
  after: OperationState;
  cause: ChangeCause;
  /** recorded_at of the record that caused it. */
  at: string;
};

/** Builds absolute links from paths: `base` is the public URL (RECONCILE_PUBLIC_URL), may be "". */
export type Links = { base: string };
export function operationLink(links: Links, operationId: string): string {
  return `${links.base.replace(/\/+$/, "")}/operations/${encodeURIComponent(operationId)}`;
}
export function auditLink(links: Links): string {
  return `${links.base.replace(/\/+$/, "")}/audit`;
}

/** The operation's summary as `operation.needs_review` carries it. */
export function operationSummary(operationId: string, state: OperationState, links: Links) {
  const c = state.classification;
  return {
    operation_id: operationId,
    tool: state.tool,
    agent: state.agent,
    trajectory_id: state.trajectory_id,
    outcome: state.effective_outcome,
    classified_as: c.outcome,
    reason: c.reason,
    failure_category: c.failure_category as FailureCategory | null,
    retry: state.retry as RetryDecision,
    link: operationLink(links, operationId),
  };
}

export const facetsOf = (state: OperationState): EventFacets => ({ tool: state.tool, agent: state.agent, outcome: state.effective_outcome });

function causeData(cause: ChangeCause) {
  if (cause.kind === "stage") return { kind: "stage" as const, stage: cause.stage, seq: cause.seq };
  if (cause.kind === "approval") return { kind: "approval" as const, action: cause.action, seq: cause.seq };
  return { kind: "correction" as const, action: cause.action, correction_id: cause.correction_id, seq: cause.seq };
}

/**
 * The operation events of one change: `operation.needs_review` when the effective outcome
 * becomes uncertain or divergent (from nothing, or from an outcome that needed nobody), and
 * `operation.verdict_changed` when an existing operation's effective outcome changed at all.
 * An outcome that stays uncertain or divergent announces nothing again.
 */
export function operationEvents(change: OutcomeChange, links: Links): WebhookEvent[] {
  const { operationId, before, after, cause, at } = change;
  const now = after.effective_outcome;
  const events: WebhookEvent[] = [];
  const base = { timestamp: at, facets: facetsOf(after), link: operationLink(links, operationId), operationId };
  if (before !== null && before !== now) {
    events.push({
      ...base,
      type: "operation.verdict_changed",
      data: {
        operation_id: operationId,
        tool: after.tool,
        agent: after.agent,
        before,
        after: now,
        reason: after.classification.reason,
        changed_by: causeData(cause),
        by: cause.by,
        link: base.link,
      },
    });
  }
  if (NEEDS_REVIEW.has(now) && (before === null || !NEEDS_REVIEW.has(before))) {
    events.push({ ...base, type: "operation.needs_review", data: operationSummary(operationId, after, links) });
  }
  return events;
}

/** A stored correction as `correction.created` carries it (docs/API.md "Corrections"). */
export type CorrectionData = {
  id: string;
  action: CorrectionAction;
  outcome_seen: string;
  outcome: Resolution | null;
  /** A resolve that also withdrew the agent's success claim. */
  withdraw_claim?: true;
  reason: string;
  evidence: Record<string, string> | null;
  reviewer: string;
  follows: string | null;
  seq: number;
  recorded_at: string;
};

export function correctionEvent(operationId: string, correction: CorrectionData, after: OperationState, links: Links): WebhookEvent {
  const link = operationLink(links, operationId);
  return {
    type: "correction.created",
    timestamp: correction.recorded_at,
    facets: facetsOf(after),
    link,
    operationId,
    data: { operation_id: operationId, correction, effective_outcome: after.effective_outcome, retry: after.retry, link },
  };
}

export function checkpointEvent(c: { size: number; head: string; time: string; key: string; signature: string }, fingerprint: string, links: Links): WebhookEvent {
  const link = auditLink(links);
  return {
    type: "checkpoint.created",
    timestamp: c.time,
    facets: { tool: null, agent: null, outcome: null },
    link,
    operationId: null,
    data: { size: c.size, head: c.head, time: c.time, key: c.key, key_fingerprint: fingerprint, signature: c.signature, link },
  };
}

/**
 * A verification found a broken link or a checkpoint that does not match: of the project's chain,
 * or (`trail: "instance"`, announced to the default project's endpoints) of the instance's own
 * security trail, whose page the link then is.
 */
export function chainFailedEvent(v: { badSeq: number | null; problem: string; checked: number }, at: string, by: string | null, links: Links, trail: "project" | "instance" = "project"): WebhookEvent {
  const link = trail === "instance" ? `${links.base.replace(/\/+$/, "")}/settings/security` : auditLink(links);
  return {
    type: "chain.verification_failed",
    timestamp: at,
    facets: { tool: null, agent: null, outcome: null },
    link,
    operationId: null,
    data: { first_bad_seq: v.badSeq, problem: v.problem, records_checked: v.checked, verified_by: by, link, ...(trail === "instance" ? { trail } : {}) },
  };
}

export function testEvent(at: string, by: string, links: Links): WebhookEvent {
  const link = `${links.base.replace(/\/+$/, "")}/settings/webhooks`;
  return {
    type: TEST_EVENT_TYPE,
    timestamp: at,
    facets: { tool: null, agent: null, outcome: null },
    link,
    operationId: null,
    data: { message: "a test event from Reconcile: this endpoint is reachable and verifies signatures", sent_by: by, link },
  };
}
