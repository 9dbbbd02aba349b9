import type { OperationState } from "../operation";
import { facetsOf, operationLink, type Links, type WebhookEvent } from "./events";

/**
 * `approval.requested` (a call is held until a reviewer decides) and `approval.decided` (approved
 * or denied; an expiry is announced the same way, decision "expired"), from the operation's state
 * after the write that caused them (docs/GATEWAY.md "Approvals in the product").
 */
function approvalData(operationId: string, state: OperationState, link: string) {
  const a = state.approval!;
  return {
    operation_id: operationId,
    tool: state.tool,
    agent: state.agent,
    rule: a.rule,
    rule_version: a.rule_version,
    params_digest: a.params_digest,
    requested_at: a.requested_at,
    expires_at: a.expires_at,
    link,
  };
}

export function approvalRequestedEvent(operationId: string, state: OperationState, links: Links): WebhookEvent {
  const link = operationLink(links, operationId);
  return {
    type: "approval.requested",
    timestamp: state.approval!.requested_at,
    facets: facetsOf(state),
    link,
    operationId,
    data: approvalData(operationId, state, link),
  };
}

export function approvalDecidedEvent(operationId: string, state: OperationState, links: Links): WebhookEvent {
  const link = operationLink(links, operationId);
  const a = state.approval!;
  const decision = a.status === "approved" ? "approve" : a.status === "denied" ? "deny" : "expired";
  return {
    type: "approval.decided",
    timestamp: a.decided_at ?? a.expires_at,
    facets: facetsOf(state),
    link,
    operationId,
    data: { ...approvalData(operationId, state, link), decision, reason: a.reason, decided_by: a.decided_by, decided_at: a.decided_at, effective_outcome: state.effective_outcome },
  };
}
