import type { ApprovalState } from "@/lib/domain/approval";
import type { AttemptAnswer } from "@/lib/domain/attempts";
import type { CorrectionAction, Resolution } from "@/lib/domain/corrections";
import type { EffectiveOutcome, FailureCategory, Outcome, RetryDecision } from "@/lib/domain/outcomes";
import type { SentBy } from "@/lib/domain/trust";
import type { VerdictEntry } from "@/lib/domain/verdict-history";
import type { Stage } from "@/lib/domain/wire";

/**
 * One operation as it is read (docs/API.md "Read"): what GET /api/v1/operations/{id} answers
 * and what the operation page and its components show. A shape only: lib/store/queries/get-operation.ts
 * makes it, and nothing here depends on the database.
 */
export type OperationDetail = {
  operation_id: string;
  outcome: Outcome;
  reason: string;
  failure_category: FailureCategory | null;
  observed_side_effects: string[];
  /** Only when the list of side effects was cut short (never on a read). */
  observed_side_effects_total?: number;
  retry: RetryDecision;
  trajectory_id: string | null;
  depends_on: string[];
  /** From the operation's merged envelope, as sent. */
  agent: unknown;
  tool: unknown;
  claimed_outcome: string | null;
  idempotency: unknown;
  /** Where the operation came from when it arrived as OpenTelemetry spans (lib/otlp): trace, span, the span's attributes. */
  otel: unknown;
  created_at: string;
  stages: OperationStageView[];
  corrections: OperationCorrectionView[];
  /** Reviewers' notes, oldest first: chained records that change no outcome (lib/domain/comments.ts). */
  comments: OperationComment[];
  /** What the agent was told, and each time it tried again (the MCP gateway's attempt records, lib/domain/attempts.ts). */
  attempts: OperationAttempt[];
  /** The derived outcome after each stage record and correction, in chain order (TRUST.md). */
  verdict_history: (VerdictEntry & { sent_by: SentBy | null; reviewer: string | null })[];
  claim_withdrawn: boolean;
  resolved_from: EffectiveOutcome | null;
  effective_outcome: EffectiveOutcome;
  needs_review: boolean;
  overclaimed: boolean;
  /** Drawn as an audit sample (docs/API.md "Metrics"): in the review queue until a reviewer acts. */
  audit_sample: boolean;
  /** The call was held for approval at the tool boundary (docs/GATEWAY.md): where that stands. */
  approval: ApprovalState | null;
  /** The operations this one names in `recovers` (Metric 5). */
  recovers: string[];
  upstream: LinkedOperation[];
  downstream: LinkedOperation[];
  /** Proposition 1: an upstream step this one relied on is not verified (or not recorded). */
  built_on_unverified_premise: boolean;
  /** What the verdict compared and found different, both values (lib/domain/operation.ts comparedOf). */
  compared: {
    wrong_tool: { operation: string; receipt: string } | null;
    fingerprint_differs: { intent: string; read: string } | null;
    /** The deciding match named the object but showed no fingerprint to compare (issue 54). */
    fingerprint_missing: { intent: string | null } | null;
    /** Verified with no fingerprint to compare: by the object's presence only. */
    presence_only: boolean;
  };
};

/** A stage record on the timeline; a canonical read says whether it is stale and whether it decided. */
export type OperationStageView = {
  seq: number;
  stage: Stage;
  observed_at: string | null;
  recorded_at: string;
  /** The stage exactly as received. */
  payload: unknown;
  envelope?: Record<string, unknown>;
  hash: string;
  sent_by: SentBy;
  stale?: boolean;
  deciding?: boolean;
};

export type OperationCorrectionView = {
  id: string;
  action: CorrectionAction;
  outcome_seen: string;
  outcome: Resolution | null;
  /** A resolve that also withdrew the agent's success claim. */
  withdraw_claim?: true;
  reason: string;
  evidence: Record<string, string> | null;
  reviewer: string | null;
  follows: string | null;
  seq: number;
  recorded_at: string;
  hash: string;
};

/** An operation this one depends on, or one that depends on it (null: not recorded). */
export type LinkedOperation = { operation_id: string; effective_outcome: string | null; tool: string | null };

/** A reviewer's note on an operation (a chained record of kind "comment"). */
/** One attempt at an operation as its recorder (the MCP gateway) saw it: what the agent was told. */
export type OperationAttempt = {
  id: string;
  answer: AttemptAnswer;
  outcome: string | null;
  text: string;
  /** When the answer went (the recorder's clock; the record's time when it gave none). */
  at: string;
  session: string | null;
  client: { name: string; version?: string } | null;
  /** Who recorded it (the record's actor). */
  recorder: string | null;
  seq: number;
  recorded_at: string;
  hash: string;
};

export type OperationComment = { id: string; text: string; author: string | null; seq: number; recorded_at: string; hash: string };
