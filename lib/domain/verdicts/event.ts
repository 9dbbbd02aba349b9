import { createHash } from "node:crypto";
import { cut } from "../json";
import type { OperationState } from "../operation";
import type { EffectiveOutcome } from "../outcomes";
import { operationLink } from "../webhooks/events";

/**
 * Verdicts out (docs/API.md "Verdicts out"): each change of an operation's effective outcome as
 * the OpenTelemetry GenAI event `gen_ai.evaluation.result` (semantic-conventions-genai,
 * docs/gen-ai/gen-ai-events.md), so the tools that already show an agent's traces show
 * Reconcile's verdict on the tool call beside it. Pure: storage keeps what this returns in the
 * outbox, in the transaction of the change; lib/verdicts/ sends it.
 */

export const EVALUATION_EVENT = "gen_ai.evaluation.result";
export const EVALUATION_NAME = "reconcile.outcome";
/** The longest explanation copied into an event. */
export const MAX_EXPLANATION = 2000;

export type VerdictAttributes = Record<string, string | number>;

/** An event as the outbox keeps it and the exporter sends it. */
export type VerdictEvent = {
  /** RFC 3339: when the change was recorded. */
  time: string;
  trace_id: string;
  /** The span the event belongs to: the tool call's own span, or one named for the operation. */
  span_id: string;
  /** True when span_id is the agent's span (OTLP `execute_tool`, or a gateway caller's traceparent). */
  parented: boolean;
  attributes: VerdictAttributes;
};

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const usable = (id: unknown, shape: RegExp): id is string => typeof id === "string" && shape.test(id) && !/^0+$/.test(id);

/**
 * Where an operation's verdict events go in the trace world: under the span that made the call
 * when the record says which (an OTLP span's `otel.span_id`; a gateway call's traceparent, kept as
 * `otel.parent_span_id`), otherwise a trace of the operation's own, the same for every event of it.
 * Ids are W3C's lowercase hex, never all zeros; anything else is not used.
 */
export function verdictTraceContext(operationId: string, envelope: Record<string, unknown>): Pick<VerdictEvent, "trace_id" | "span_id" | "parented"> {
  const otel = envelope.otel;
  if (otel && typeof otel === "object" && !Array.isArray(otel)) {
    const o = otel as Record<string, unknown>;
    const span = usable(o.span_id, SPAN_ID) ? o.span_id : o.span_id === undefined && usable(o.parent_span_id, SPAN_ID) ? o.parent_span_id : null;
    if (usable(o.trace_id, TRACE_ID) && span) return { trace_id: o.trace_id, span_id: span, parented: true };
  }
  const h = createHash("sha256").update(`reconcile.operation:${operationId}`).digest("hex");
  return { trace_id: h.slice(0, 32), span_id: h.slice(32, 48), parented: false };
}

/** gen_ai.evaluation.score.value: 1 when the effect is there, 0 when it is not, none while unknown. */
export function scoreValue(outcome: EffectiveOutcome): number | undefined {
  if (outcome === "verified") return 1;
  if (outcome === "uncertain") return undefined;
  return 0;
}

export type VerdictChange = {
  operationId: string;
  after: Pick<OperationState, "envelope" | "classification" | "effective_outcome" | "tool">;
  at: string;
  /** The correction that caused the change. */
  reviewer?: { action: string; reason: string };
  /** RECONCILE_PUBLIC_URL, for a link to the operation's page. */
  publicUrl?: string;
  /** The slug of the operation's project (an operation id is unique only within it). */
  project?: string;
};

/**
 * The event for one change. It carries the verdict, the operation's id, its tool and failure
 * category, and never the record's own fields (an idempotency key, the intent's parameters).
 */
export function verdictEvent(change: VerdictChange): VerdictEvent {
  const { operationId, after, at, reviewer, publicUrl, project } = change;
  const value = scoreValue(after.effective_outcome);
  const reason = after.classification.reason;
  const explanation = reviewer ? `${reason}; a reviewer's ${reviewer.action}: ${reviewer.reason}` : reason;
  const attributes: VerdictAttributes = {
    "event.name": EVALUATION_EVENT,
    "gen_ai.evaluation.name": EVALUATION_NAME,
    "gen_ai.evaluation.score.label": after.effective_outcome,
    ...(value === undefined ? {} : { "gen_ai.evaluation.score.value": value }),
    "gen_ai.evaluation.explanation": cut(explanation, MAX_EXPLANATION),
    ...(after.tool ? { "gen_ai.tool.name": after.tool } : {}),
    "reconcile.operation.id": operationId,
    ...(project ? { "reconcile.project": project } : {}),
    ...(after.classification.failure_category ? { "reconcile.failure_category": after.classification.failure_category } : {}),
    ...(publicUrl ? { "reconcile.link": operationLink({ base: project ? `${publicUrl}/p/${project}` : publicUrl }, operationId) } : {}),
  };
  return { time: at, ...verdictTraceContext(operationId, after.envelope), attributes };
}

/**
 * Headers as the OpenTelemetry SDK reads OTEL_EXPORTER_OTLP_HEADERS: `key=value` pairs separated
 * by commas, values percent-decoded, blanks trimmed; a pair without a key or `=` is ignored.
 */
export function parseOtlpHeaders(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (raw ?? "").split(",")) {
    const i = pair.indexOf("=");
    if (i <= 0) continue;
    const key = pair.slice(0, i).trim();
    if (!key) continue;
    let value = pair.slice(i + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // kept as written
    }
    out[key] = value;
  }
  return out;
}

/** The logs endpoint: the URL as given when it ends in /v1/logs, else /v1/logs under it (as OTEL_EXPORTER_OTLP_ENDPOINT). */
export function verdictLogsUrl(endpoint: string): string {
  const base = endpoint.trim();
  if (/\/v1\/logs\/?$/.test(base)) return base;
  return `${base.replace(/\/+$/, "")}/v1/logs`;
}
