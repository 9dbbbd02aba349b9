import type { Metadata } from "next";
import { ApprovalList } from "@/components/review/approval-list";
import { QueueTabs } from "@/components/review/queue-tabs";
import { renderedAt } from "@/components/ui/when";
import { can } from "@/lib/domain/permissions";
import { inProject } from "@/lib/store/db/project-context";
import { requirePage } from "@/lib/auth/session";
import { approvalQueue } from "@/lib/store/review/approvals";
import { reviewCounts } from "@/lib/store/queries/overview";

export const metadata: Metadata = { title: "Approvals" };

/** Calls the MCP gateway holds until a reviewer approves or denies them, oldest first. */
export default async function ApprovalsPage() {
  const me = await requirePage("operations:read", "/review/approvals");
  // Everything this page reads is its project's (lib/store/db/project-context.ts).
  return inProject(me.project, async () => {
    const [{ calls, total }, counts] = await Promise.all([approvalQueue(50), reviewCounts()]);
    const canDecide = can(me, "operations:correct");
    return (
      <div className="space-y-6">
        <div>
          <h1 className="text-2xl font-semibold">Review</h1>
          <p className="mt-1 text-slate-700 dark:text-slate-300">
            {total === 0
              ? "No call is waiting for approval. Calls the MCP gateway holds by a rule (for example a charge over a limit) appear here until someone approves or denies them."
              : `${total} held call${total === 1 ? " waits" : "s wait"} for a reviewer, oldest first. An approval lets exactly this call, with these arguments, go out once; a denial tells the caller your reason. Unanswered calls expire and are not sent.`}
          </p>
        </div>
        <QueueTabs current="approvals" approvals={total} queue={counts.total} />
        {calls.length === 0 ? (
          <p className="rounded-xl border border-dashed border-slate-300 p-8 text-center dark:border-slate-700">Nothing is held. The README&apos;s &ldquo;Put Reconcile in front of your MCP servers&rdquo; says how to mark tools that need approval.</p>
        ) : (
          <ApprovalList rows={calls} me={me.email} canDecide={canDecide} now={renderedAt()} />
        )}
        {total > calls.length ? <p className="text-sm text-slate-600 dark:text-slate-400">Showing the oldest {calls.length} of {total}.</p> : null}
      </div>
    );
  });
}
