import type { WebhookEvent } from "./events";

/** Slack's mrkdwn needs &, < and > escaped in text it should not read as markup. */
const esc = (s: unknown) => String(s ?? "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const clip = (s: unknown, n = 200) => {
  const t = String(s ?? "");
  return t.length > n ? `${t.slice(0, n)}…` : t;
};

/**
 * A Slack-compatible message (an incoming-webhook URL takes `{"text"}`): one short line saying
 * what happened, and the link to the page with everything.
 */
export function slackMessage(event: Pick<WebhookEvent, "type" | "data" | "link">): { text: string } {
  const d = event.data;
  const op = d.operation_id ? `\`${esc(clip(d.operation_id, 120))}\`` : "";
  const what = [d.tool, d.agent && `agent ${d.agent}`].filter(Boolean).map((s) => esc(clip(s, 80))).join(", ");
  const about = what ? `${op} (${what})` : op;
  let line: string;
  switch (event.type) {
    case "operation.needs_review":
      line = `:warning: Operation ${about} needs review: *${esc(d.outcome)}*: ${esc(clip(d.reason))}`;
      break;
    case "operation.verdict_changed":
      line = `:arrows_counterclockwise: Operation ${about} changed from *${esc(d.before)}* to *${esc(d.after)}*${d.by ? ` (by ${esc(clip(d.by, 120))})` : ""}`;
      break;
    case "correction.created": {
      const c = d.correction as { action?: string; reviewer?: string; reason?: string };
      line = `:memo: ${esc(c.reviewer)} recorded a ${esc(c.action)} on operation ${op}: now *${esc(d.effective_outcome)}*: ${esc(clip(c.reason, 150))}`;
      break;
    }
    case "checkpoint.created":
      line = `:lock: Checkpoint signed: ${esc(d.size)} records, head \`${esc(clip(d.head, 16))}…\`, key ${esc(clip(d.key_fingerprint, 30))}`;
      break;
    case "chain.verification_failed":
      line = `:rotating_light: The audit chain failed verification at seq ${esc(d.first_bad_seq)}: ${esc(clip(d.problem))}`;
      break;
    default:
      line = `:white_check_mark: Test event from Reconcile`;
  }
  return { text: `${line} <${event.link}|Open in Reconcile>` };
}
