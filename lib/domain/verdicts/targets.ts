import { createHash } from "node:crypto";
import { EVALUATION_NAME, type VerdictEvent } from "./event";

/**
 * Where verdicts go (docs/DEPLOY.md "Verdicts out"): each change of an operation's effective
 * outcome is one outbox row per configured target.
 *   - `otlp`: the OpenTelemetry event as an OTLP log record (for an OpenTelemetry Collector);
 *   - `phoenix`: a span annotation on the tool call's span (Arize Phoenix);
 *   - `langfuse`: a score on the tool call's observation (Langfuse).
 * Phoenix and Langfuse attach a verdict to a span they already hold, so an operation that came
 * without OpenTelemetry trace context has nothing there to attach to: its row for them is written
 * as `not_exportable` with the reason, counted and listed in the delivery log, never sent.
 * Pure: the environment is passed in.
 */

export const VERDICT_TARGET_KINDS = ["otlp", "phoenix", "langfuse"] as const;
export type VerdictTargetKind = (typeof VERDICT_TARGET_KINDS)[number];

/** The setting whose presence turns each target on. */
export const TARGET_SETTING: Record<VerdictTargetKind, string> = {
  otlp: "RECONCILE_VERDICT_OTLP_ENDPOINT",
  phoenix: "RECONCILE_VERDICT_PHOENIX_URL",
  langfuse: "RECONCILE_VERDICT_LANGFUSE_URL",
};

export const TARGET_NAME: Record<VerdictTargetKind, string> = { otlp: "OTLP", phoenix: "Phoenix", langfuse: "Langfuse" };

/** The targets the environment turns on, in a fixed order. */
export function configuredVerdictTargets(env: Record<string, string | undefined>): VerdictTargetKind[] {
  return VERDICT_TARGET_KINDS.filter((k) => Boolean(env[TARGET_SETTING[k]]?.trim()));
}

/** Whether the target needs the agent's own span (Phoenix and Langfuse annotate spans they hold). */
export const needsSpan = (kind: VerdictTargetKind): boolean => kind !== "otlp";

/** Why an operation's verdict cannot go to `kind`, or null when it can. */
export function notExportableReason(kind: VerdictTargetKind, event: Pick<VerdictEvent, "parented">): string | null {
  if (!needsSpan(kind) || event.parented) return null;
  return `not exportable to ${TARGET_NAME[kind]}: the operation came without OpenTelemetry trace context (sent by the API or a client without a span or traceparent), so there is no span of the agent's to attach the verdict to`;
}

const attr = (e: VerdictEvent, key: string): string | undefined => {
  const v = e.attributes[key];
  return v === undefined ? undefined : String(v);
};

/** The annotation's name in Phoenix and the score's name in Langfuse. */
export { EVALUATION_NAME };

/**
 * The Phoenix span annotation of one verdict, as `@arizeai/phoenix-client`'s logSpanAnnotations
 * takes it: on the tool call's span, by code, named `reconcile.outcome`, the effective outcome as
 * its label, score 1 verified / 0 not applied (none while uncertain, as the OTLP event), the reason
 * as explanation. `identifier` is the operation's id, so a later verdict replaces the earlier one.
 */
export function phoenixAnnotation(e: VerdictEvent) {
  const value = e.attributes["gen_ai.evaluation.score.value"];
  const metadata: Record<string, string> = {};
  for (const [k, key] of [
    ["operation_id", "reconcile.operation.id"],
    ["project", "reconcile.project"],
    ["tool", "gen_ai.tool.name"],
    ["failure_category", "reconcile.failure_category"],
    ["link", "reconcile.link"],
  ] as const) {
    const v = attr(e, key);
    if (v !== undefined) metadata[k] = v;
  }
  return {
    spanId: e.span_id,
    name: EVALUATION_NAME,
    annotatorKind: "CODE" as const,
    label: String(e.attributes["gen_ai.evaluation.score.label"]),
    ...(typeof value === "number" ? { score: value } : {}),
    explanation: attr(e, "gen_ai.evaluation.explanation") ?? "",
    identifier: attr(e, "reconcile.operation.id") ?? "",
    metadata,
  };
}

/**
 * The id of an operation's Langfuse score: the same for every verdict of the operation (a later
 * one updates the score), different across projects (an operation id is unique only within one).
 */
export function langfuseScoreId(e: VerdictEvent): string {
  const h = createHash("sha256").update(`reconcile.outcome:${attr(e, "reconcile.project") ?? ""}:${attr(e, "reconcile.operation.id") ?? ""}`).digest("hex");
  return `reconcile-${h.slice(0, 32)}`;
}
