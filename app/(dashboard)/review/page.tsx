import type { Metadata } from "next";
import Link from "@/components/shell/link";
import { redirect } from "next/navigation";
import { QUEUE_FILTERS, QueueTabs } from "@/components/review/queue-tabs";
import { ReviewQueue } from "@/components/review/review-queue";
import { pendingApprovalCount } from "@/lib/store/review/approvals";
import { renderedAt } from "@/components/ui/when";
import { can, roleAtLeast } from "@/lib/domain/permissions";
import { inProject } from "@/lib/store/db/project-context";
import { requirePage } from "@/lib/auth/session";
import { assigneesOf, heldBy } from "@/lib/store/review/assignments";
import { correctionActsOf, lastCorrectionsOf, listOperations, listQuerySchema } from "@/lib/store/queries/list-operations";
import { statusLine } from "@/lib/domain/status";
import type { Review } from "@/lib/domain/metrics";
import type { EffectiveOutcome, Outcome } from "@/lib/domain/outcomes";
import { reviewAgeHours } from "@/lib/domain/time";
import { reviewCounts } from "@/lib/store/queries/overview";
import { headlinesOf } from "@/lib/store/queries/headlines";
import { projectPath } from "@/lib/domain/projects";

export const metadata: Metadata = { title: "Review" };

type Search = Record<string, string | string[] | undefined>;
const FILTERS = QUEUE_FILTERS;
const TABS = ["queue", "approvals"];

export default async function ReviewPage({ searchParams }: { searchParams: Promise<Search> }) {
  const me = await requirePage("operations:read", "/review");
  // Everything this page reads is its project's (lib/store/db/project-context.ts).
  return inProject(me.project, async () => {
    const sp = await searchParams;
    const pick = (k: string) => (typeof sp[k] === "string" && sp[k] ? (sp[k] as string) : undefined);
    // ?tab=approvals is the Approvals tab's own page; a tab that does not exist is said, not another list.
    if (pick("tab") === "approvals") redirect(projectPath(me.project.slug, "/review/approvals"));
    const badTab = pick("tab") !== undefined && !TABS.includes(pick("tab")!) ? pick("tab")! : null;
    const ageHours = reviewAgeHours(process.env.RECONCILE_REVIEW_AGE_HOURS);
    const now = renderedAt();
    const order = pick("order") === "newest" ? "newest" : "oldest";
    const current = FILTERS.find(([q]) => q && pick(q.split("=")[0]) === q.split("=")[1])?.[0] ?? "";
    // "Over 24 h old": called before now minus the threshold.
    const calledUntil = current === "old=true" ? new Date(now - ageHours * 3_600_000).toISOString() : undefined;
    const query = listQuerySchema.safeParse({ needs_review: "true", by: "called", order: pick("order") ?? "oldest", outcome: pick("outcome"), overclaimed: pick("overclaimed"), called_until: calledUntil, cursor: pick("cursor"), limit: "50" });
    const [counts, held] = await Promise.all([reviewCounts(), pendingApprovalCount()]);
    const reviewer = can(me, "operations:correct");
    // "Assigned to me": what I hold now (claimed by me, or taken over by me), still needing review.
    const only = current === "assigned=me" ? await heldBy(me.email) : undefined;
    const { items, next_cursor } = query.success && !badTab ? await listOperations(query.data, only) : { items: [], next_cursor: null };
    const holders = await assigneesOf(items.map((i) => i.operation_id));
    const headlines = await headlinesOf(items);
    const lastCorrections = reviewer ? await lastCorrectionsOf(items.map((i) => i.operation_id)) : new Map<string, string | null>();
    const acts = await correctionActsOf(items);
    const withFilter = (extra: Record<string, string>) => new URLSearchParams({ ...(current ? Object.fromEntries([current.split("=")]) : {}), ...extra });
    const orderLink = (o: "oldest" | "newest") => {
      const p = withFilter(o === "newest" ? { order: "newest" } : {});
      return `/review${p.size ? `?${p}` : ""}`;
    };

    return (
      <div className="space-y-6">
        <div>
          <h1 className="text-2xl font-semibold">Review</h1>
          <p className="mt-1 text-slate-700 dark:text-slate-300">
            {counts.total === 0
              ? "Nothing needs a person right now: every operation is verified, rejected or reconciled."
              : `${counts.total} operation${counts.total === 1 ? "" : "s"} need${counts.total === 1 ? "s" : ""} a person: ${counts.divergent} divergent, ${counts.uncertain} uncertain and ${counts.rejected} rejected whose agent claimed success anyway; ${counts.overclaimed} of them ${counts.overclaimed === 1 ? "is a success the agent claimed" : "are successes the agent claimed"}.`}
          </p>
        </div>
        <QueueTabs current={current} approvals={held} queue={counts.total} ageHours={ageHours} order={order} />
        {counts.total > 0 ? (
          <nav aria-label="Queue order" className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm text-slate-700 dark:text-slate-300">
            <span>Order:</span>
            {(["oldest", "newest"] as const).map((o) => (
              <Link key={o} href={orderLink(o)} aria-current={order === o ? "page" : undefined} className={order === o ? "font-semibold text-slate-900 dark:text-white" : "text-indigo-700 underline underline-offset-2 dark:text-indigo-300"}>
                {o === "oldest" ? "oldest call first" : "newest call first"}
              </Link>
            ))}
            <span className="text-xs text-slate-600 dark:text-slate-400">
              <span aria-hidden className="max-sm:hidden">· </span>calls over {ageHours} h old have their age in amber
            </span>
          </nav>
        ) : null}
        {badTab ? (
          <p role="alert" className="rounded-md border border-rose-300 bg-rose-50 px-3 py-2 text-sm text-rose-900 dark:border-rose-800 dark:bg-rose-950 dark:text-rose-200">
            Review has no tab named “{badTab}”: its tabs are the queue and approvals (above).
          </p>
        ) : !query.success || (!current && (pick("outcome") || pick("overclaimed") || pick("assigned") || pick("old"))) || (pick("order") && !["oldest", "newest"].includes(pick("order")!)) ? (
          <p role="alert" className="rounded-md border border-rose-300 bg-rose-50 px-3 py-2 text-sm text-rose-900 dark:border-rose-800 dark:bg-rose-950 dark:text-rose-200">
            That is not one of the queue&apos;s filters: the queue holds the divergent and uncertain operations nobody has reconciled, and the rejected ones whose agent claimed success. Pick a filter above.
          </p>
        ) : items.length === 0 ? (
          <p className="rounded-xl border border-dashed border-slate-300 p-8 text-center dark:border-slate-700">
            {current === "assigned=me" ? "You hold nothing in the queue: claim an item (c on a row), or open Resolve on one, to see it here." : `The queue is empty${current ? " for this filter" : ""}.`}
          </p>
        ) : (
          <ReviewQueue
            rows={items.map((op) => ({
              operation_id: op.operation_id,
              tool: op.tool,
              headline: headlines.get(op.operation_id) ?? null,
              effective_outcome: op.effective_outcome,
              overclaimed: op.overclaimed,
              audit_sample: op.audit_sample,
              // A reopened or retracted item says what a reviewer did, not a reason it contradicts.
              reason: statusLine({ outcome: op.outcome as Outcome, reason: op.reason, effective_outcome: op.effective_outcome as EffectiveOutcome, review: op.review as Review, act: acts.get(op.operation_id) ?? null }).text,
              created_at: op.created_at,
              called_at: op.called_at,
              holder: holders.get(op.operation_id) ?? null,
              last_correction_id: lastCorrections.get(op.operation_id) ?? null,
            }))}
            me={me.email}
            reviewer={reviewer}
            admin={roleAtLeast(me.role, "admin")}
            now={now}
            ageHours={ageHours}
            order={order}
          />
        )}
        {next_cursor ? (
          <Link href={`/review?${withFilter({ ...(order === "newest" ? { order } : {}), cursor: next_cursor })}`} className="text-sm text-indigo-700 underline dark:text-indigo-300">
            More →
          </Link>
        ) : null}
      </div>
    );
  });
}
