/**
 * An upstream's elicitation request (`elicitation/create`: the server asks the user something
 * while it runs a call) goes to the MCP client whose call caused it, when that client declared
 * the `elicitation` capability. The protocol does not say which call an elicitation belongs to
 * (the SDK's relatedRequestId routes it on the upstream's side only; nothing of it reaches the
 * gateway), so it is relayed only while exactly one call to that upstream is in flight; otherwise
 * the upstream is answered `cancel` (nobody was asked). Approvals never go this way: a held call
 * waits for a reviewer in Reconcile, and the gateway itself never elicits. Pure.
 */
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";

/** Asks the calling client (its own elicitation/create), cancelled with `signal`. */
export type Elicit = (params: ElicitRequest["params"], signal: AbortSignal) => Promise<ElicitResult>;

/** A call in flight to an upstream: how to ask its client, or null when the client cannot be asked. */
export type InFlightCall = { elicit: Elicit | null };

/** What the upstream hears when nobody could be asked. */
export const NOBODY_ASKED: ElicitResult = { action: "cancel" };

/** The client an upstream's elicitation goes to, or why it goes to none. */
export function elicitationTarget(upstream: string, calls: ReadonlySet<InFlightCall> | undefined): { to: Elicit } | { none: string } {
  const n = calls?.size ?? 0;
  if (n === 0) return { none: `the upstream ${upstream} asked the user something outside any call: answered cancel` };
  if (n > 1) return { none: `the upstream ${upstream} asked the user something while ${n} calls to it were in flight, and MCP does not say which one asked: answered cancel` };
  const [only] = calls!;
  if (!only.elicit) return { none: `the upstream ${upstream} asked the user something, but the calling client did not declare the elicitation capability: answered cancel` };
  return { to: only.elicit };
}
