/**
 * The retry gate at the tool boundary (docs/GATEWAY.md "Each tools/call" 2): what the gateway
 * does with a repeated call, from the earlier attempt as Reconcile has it. Pure.
 *
 * | earlier attempt                         | the gateway                                        |
 * |-----------------------------------------|----------------------------------------------------|
 * | verified                                | replays the recorded result, says so               |
 * | rejected, resolved not_applied, expired | forwards, as a new attempt that recovers the old   |
 * | uncertain, divergent                    | refuses with the server's reason (an idempotent    |
 * |                                         | tool: forwards, as a new attempt)                  |
 * | compensated                             | refuses: the effect was compensated                |
 * | waiting for approval                    | waits on the same approval                         |
 * | approved, not yet forwarded             | forwards it (once) under the same operation        |
 * | approved and forwarded, no receipt yet  | refuses: its fate is unknown                       |
 * | denied                                  | refuses with the reviewer's reason                 |
 */

import { paramsDigest } from "./rules.js";

/** The parts of `GET /api/v1/operations/{id}` the gate reads. */
export type EarlierAttempt = {
  operation_id?: string;
  effective_outcome?: string;
  reason?: string;
  retry?: { decision?: string; safe_replay_available?: boolean };
  tool?: unknown;
  approval?: { status?: string; decided_by?: string | null; reason?: string | null; expires_at?: string; used_at?: string | null; used_by?: string | null } | null;
  stages?: { stage?: string; payload?: unknown }[];
};

export type GateDecision =
  | { kind: "replay"; text: string; structured: Record<string, unknown> | undefined }
  | { kind: "forward_new" }
  | { kind: "refuse"; text: string }
  | { kind: "wait" }
  | { kind: "use_approval" };

/** The server's reason while a verifier's observation window is open (docs/DOMAIN.md): not yet a failure. */
const WINDOW_OPEN = "observation window open";

const receiptOf = (op: EarlierAttempt) => op.stages?.find((s) => s.stage === "receipt")?.payload as { status?: string; raw?: unknown } | undefined;

/** The recorded result as text and structured content, from the receipt's `raw` (what the gateway stored). */
export function recordedResult(raw: unknown): { text: string; structured: Record<string, unknown> | undefined } {
  if (raw && typeof raw === "object" && !Array.isArray(raw)) {
    const r = raw as { text?: unknown; structuredContent?: unknown };
    if (typeof r.text === "string" || r.structuredContent !== undefined) {
      const structured = r.structuredContent && typeof r.structuredContent === "object" ? (r.structuredContent as Record<string, unknown>) : undefined;
      return { text: typeof r.text === "string" ? r.text : JSON.stringify(r.structuredContent), structured };
    }
    return { text: JSON.stringify(raw), structured: raw as Record<string, unknown> };
  }
  return { text: typeof raw === "string" ? raw : JSON.stringify(raw ?? null), structured: undefined };
}

/** The tool and the arguments' digest an operation's intent recorded. */
function recordedCall(op: EarlierAttempt): { tool: string | null; digest: string | null } {
  const t = op.tool;
  const tool = typeof t === "string" ? t : t && typeof t === "object" && typeof (t as { name?: unknown }).name === "string" ? (t as { name: string }).name : null;
  const intent = op.stages?.find((s) => s.stage === "intent")?.payload as { params?: unknown } | undefined;
  const params = intent?.params && typeof intent.params === "object" && !Array.isArray(intent.params) ? (intent.params as Record<string, unknown>) : intent ? {} : null;
  return { tool, digest: params ? paramsDigest(params) : null };
}

/** Outcomes a reviewer's correction leaves: they decide, whatever an approval said. */
const RESOLVED = new Set(["not_applied", "compensated"]);

/**
 * `call`: the repeat itself (its tool and arguments' digest). An id the caller chose that names a
 * different call is refused: it would otherwise get another call's result, or its approval.
 */
export function gate(op: EarlierAttempt, tool: string, call?: { tool: string; params_digest: string }, kind: "idempotent" | "write" = "write"): GateDecision {
  const id = op.operation_id ?? "the earlier call";
  if (call) {
    const recorded = recordedCall(op);
    if ((recorded.tool !== null && recorded.tool !== call.tool) || (recorded.digest !== null && recorded.digest !== call.params_digest)) {
      return { kind: "refuse", text: `not sent: operation ${id} is another call (${recorded.tool !== call.tool ? `the tool ${recorded.tool}` : "other arguments"}); send this one with a request id of its own` };
    }
  }
  const receipt = receiptOf(op);
  const approval = op.approval ?? null;
  if (approval && !receipt && !RESOLVED.has(op.effective_outcome ?? "")) {
    if (approval.status === "pending") return { kind: "wait" };
    if (approval.status === "denied") return { kind: "refuse", text: `not sent: ${tool} was denied by ${approval.decided_by ?? "a reviewer"}: ${approval.reason ?? ""} (operation ${id})`.trim() };
    if (approval.status === "expired") return { kind: "forward_new" };
    if (approval.status === "approved" && !approval.used_at) return { kind: "use_approval" };
    if (approval.status === "approved") {
      return { kind: "refuse", text: `not sent again: the approved ${tool} call was already forwarded (by ${approval.used_by ?? "a gateway"} at ${approval.used_at}) and its result is not recorded, so whether it took effect is unknown; a reviewer must reconcile operation ${id}` };
    }
  }
  switch (op.effective_outcome) {
    case "verified": {
      const { text, structured } = recordedResult(receipt?.raw);
      return { kind: "replay", text: `already done (verified, operation ${id}): ${text}`, structured };
    }
    case "rejected":
    case "not_applied":
      return { kind: "forward_new" };
    case "compensated":
      return { kind: "refuse", text: `not sent again: the earlier ${tool} call's effect was compensated (operation ${id}); do not retry it` };
    case "uncertain":
    case "divergent": {
      // An idempotent tool's repeat has no further effect: it is sent again, as a new attempt.
      if (kind === "idempotent") return { kind: "forward_new" };
      const why = op.reason ?? "its effect is not verified";
      if (why === WINDOW_OPEN) {
        return { kind: "refuse", text: `not sent again: the earlier ${tool} call is still being verified (${why}); ask again in a few seconds, or a reviewer reconciles operation ${id}` };
      }
      return {
        kind: "refuse",
        text: `not sent again: the earlier ${tool} call is ${op.effective_outcome} (${why}); a reviewer must reconcile operation ${id} in Reconcile before it may be repeated`,
      };
    }
    default:
      return { kind: "refuse", text: `not sent again: Reconcile gave no outcome for operation ${id}, so a repeat is not safe` };
  }
}
