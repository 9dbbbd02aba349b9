import { ApprovalCard } from "./approval-list";
import { When } from "@/components/ui/when";
import type { OperationDetail } from "@/lib/views/operation-detail";

/**
 * The approval of a call the gateway held (docs/GATEWAY.md): while pending, the same card as
 * the Approvals tab (decide here); afterwards, who decided what and when, and whether it went out.
 */
export function ApprovalPanel({ op, me, canDecide, now }: { op: OperationDetail; me: string; canDecide: boolean; now: number }) {
  const a = op.approval!;
  if (a.status === "pending") {
    const intent = op.stages.find((s) => s.stage === "intent")?.payload as { params?: Record<string, unknown>; effect?: string } | undefined;
    const tool = typeof op.tool === "string" ? op.tool : ((op.tool as { name?: string } | null)?.name ?? null);
    const agent = typeof op.agent === "string" ? op.agent : ((op.agent as { name?: string } | null)?.name ?? null);
    return (
      <section aria-labelledby="approval-heading" className="space-y-2">
        <h2 id="approval-heading" className="text-lg font-semibold">
          Waiting for approval
        </h2>
        <ApprovalCard
          row={{ operation_id: op.operation_id, tool, agent, owner: null, rule: a.rule, effect: intent?.effect ?? null, params: intent?.params ?? {}, requested_at: a.requested_at, expires_at: a.expires_at }}
          me={me}
          canDecide={canDecide}
          now={now}
        />
      </section>
    );
  }
  const tone =
    a.status === "approved"
      ? "border-emerald-300 bg-emerald-50 text-emerald-950 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-100"
      : "border-rose-300 bg-rose-50 text-rose-950 dark:border-rose-800 dark:bg-rose-950 dark:text-rose-100";
  return (
    <section aria-labelledby="approval-heading" className={`space-y-1 rounded-md border px-3 py-2 text-sm ${tone}`}>
      <h2 id="approval-heading" className="font-semibold">
        {a.status === "approved" ? "Approved" : a.status === "denied" ? "Denied" : "Approval expired"}
      </h2>
      <p>
        Held by the rule <span className="font-mono">{a.rule}</span>, asked <When at={a.requested_at} now={now} />.
      </p>
      {a.status === "expired" ? (
        <p>
          Nobody approved it before <When at={a.expires_at} now={now} />: the call was not sent.
        </p>
      ) : (
        <p>
          {a.status === "approved" ? "Approved" : "Denied"} by {a.decided_by} <When at={a.decided_at} now={now} />: &ldquo;{a.reason}&rdquo;
          {a.status === "denied" ? " The call was not sent." : null}
        </p>
      )}
      {a.status === "approved" ? (
        <p>{a.used_at ? <>Forwarded once, by {a.used_by}, <When at={a.used_at} now={now} />.</> : "Not forwarded yet: the gateway forwards it when the caller is still waiting."}</p>
      ) : null}
    </section>
  );
}
