/**
 * What the gateway tells the agent of Reconcile's verdict (docs/GATEWAY.md "Outcome at the
 * boundary"): the `_meta["reconcile/outcome"]` every recorded call's answer carries, and, for a
 * tool with `await_verdict`, the answer itself: verified (the tool's result and a line saying
 * so), divergent (an error, the tool's result kept in structuredContent), or not verified yet.
 * Pure.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CallKind } from "./config.js";

export const OUTCOME_META = "reconcile/outcome";

export type OutcomeMeta = {
  operation_id: string;
  /** verified, uncertain, divergent, rejected (or a reviewer's not_applied, compensated). */
  outcome: string;
  reason: string;
  /** The retry decision in words. */
  retry: string;
  /** The operation's page in Reconcile, when known. */
  link: string | null;
};

/**
 * Reconcile's words for what a gateway knows at answer time without asking (lib/domain/outcomes.ts
 * REASONS and RETRY_DECISIONS; a test holds them equal): a receipt just recorded is uncertain until
 * something reads the canonical state, a refusal is rejected.
 */
export const WORDS = {
  readUnavailable: "the write was accepted, but canonical read-back is unavailable",
  rejected: "the write boundary did not accept the operation",
  blocked: "blocked until canonical state is reconciled",
  idempotent: "the tool is idempotent: a repeat has no further effect, so it may be sent again",
  newOperation: "a new operation may be justified by new evidence",
} as const;

/** The parts of `GET /api/v1/operations/{id}` read here. */
export type OperationView = {
  operation_id?: string;
  effective_outcome?: string;
  outcome?: string;
  reason?: string;
  retry?: { decision?: string };
  link?: string;
};

/** The meta of an operation as Reconcile answered it; `base` is Reconcile's URL, for the link. */
export function metaOf(op: OperationView, id: string, base: string): OutcomeMeta {
  return {
    operation_id: id,
    outcome: op.effective_outcome ?? op.outcome ?? "uncertain",
    reason: op.reason ?? "",
    retry: op.retry?.decision ?? WORDS.blocked,
    link: typeof op.link === "string" && op.link.startsWith("/") ? base.replace(/\/+$/, "") + op.link : null,
  };
}

/** What the gateway knows of a call it just recorded, without asking Reconcile: its receipt's word. */
export function metaAtAnswer(id: string, receipt: "accepted" | "rejected", kind: CallKind, link: string | null): OutcomeMeta {
  if (receipt === "rejected") return { operation_id: id, outcome: "rejected", reason: WORDS.rejected, retry: WORDS.newOperation, link };
  return { operation_id: id, outcome: "uncertain", reason: WORDS.readUnavailable, retry: kind === "write" ? WORDS.blocked : WORDS.idempotent, link };
}

/** The answer with the meta attached (what the agent's client may read; the text is left as it is). */
export function withMeta(result: CallToolResult, meta: OutcomeMeta): CallToolResult {
  return { ...result, _meta: { ...(result._meta ?? {}), [OUTCOME_META]: meta } };
}

const textLine = (text: string) => ({ type: "text" as const, text });
const where = (m: OutcomeMeta) => (m.link ? `operation ${m.operation_id}: ${m.link}` : `operation ${m.operation_id}`);

/**
 * The answer to a call that waited for its verdict (`await_verdict`), from the tool's own result
 * and what Reconcile knows when the wait ended.
 */
export function verdictAnswer(result: CallToolResult, meta: OutcomeMeta): CallToolResult {
  const content = result.content ?? [];
  switch (meta.outcome) {
    case "verified":
      return withMeta({ ...result, content: [...content, textLine(`Reconcile: verified (${meta.reason})`)] }, meta);
    case "divergent":
    case "not_applied":
      // The tool said it worked; the canonical state says otherwise. Its own answer is kept, but not as a success.
      return withMeta(
        {
          content: [textLine(`Reconcile: ${meta.reason}; the tool's answer was not borne out, so do not report it as done (${where(meta)})`), ...content],
          structuredContent: result.structuredContent ?? { tool_result: { content } },
          isError: true,
        },
        meta,
      );
    case "uncertain":
      return withMeta(
        { ...result, content: [...content, textLine(`Reconcile: not verified yet (${meta.reason}); do not build on it — ask reconcile_status later (${where(meta)})`)] },
        meta,
      );
    default:
      return withMeta(result, meta);
  }
}

/** The status tool's answer for an operation, in words and as structured content. */
export function statusAnswer(meta: OutcomeMeta): CallToolResult {
  const text = `Reconcile: operation ${meta.operation_id} is ${meta.outcome}${meta.reason ? ` (${meta.reason})` : ""}; retry: ${meta.retry}${meta.link ? `; ${meta.link}` : ""}`;
  return { content: [textLine(text)], structuredContent: { ...meta }, _meta: { [OUTCOME_META]: meta } };
}
