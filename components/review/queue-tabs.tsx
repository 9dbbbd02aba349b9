import Link from "@/components/shell/link";

/** The review queue's filters (each a query of /review). */
export const QUEUE_FILTERS = [
  ["", "everything"],
  ["outcome=divergent", "divergent"],
  ["outcome=uncertain", "uncertain"],
  ["outcome=rejected", "rejected, success claimed"],
  ["overclaimed=true", "overclaimed successes"],
  ["old=true", "over 24 h old"],
  ["assigned=me", "assigned to me"],
] as const;

const pill = (on: boolean) =>
  `shrink-0 whitespace-nowrap rounded-full border px-3 py-1 ${on ? "border-indigo-500 bg-indigo-50 font-medium dark:bg-indigo-950" : "border-slate-300 dark:border-slate-700"}`;
const tab = (on: boolean) =>
  `-mb-px whitespace-nowrap border-b-2 px-3 py-2 ${on ? "border-indigo-600 font-semibold text-slate-900 dark:text-white" : "border-transparent text-slate-700 hover:border-slate-300 dark:text-slate-300"}`;

/**
 * Review's two tabs — the queue and the held calls waiting for approval — and, on the queue, its
 * filters: one row that scrolls sideways on a phone rather than three lines of pills.
 * `ageHours` names the age filter by the configured threshold.
 */
export function QueueTabs({ current, approvals, queue, ageHours = 24, order }: { current: string | "approvals"; approvals: number; queue?: number; ageHours?: number; order?: "oldest" | "newest" }) {
  const onApprovals = current === "approvals";
  return (
    <div className="space-y-3">
      <nav aria-label="Review tabs" className="flex gap-1 border-b border-slate-200 text-sm dark:border-slate-800">
        <Link href="/review" aria-current={onApprovals ? undefined : "page"} className={tab(!onApprovals)}>
          queue{queue ? ` (${queue})` : ""}
        </Link>
        <Link href="/review/approvals" aria-current={onApprovals ? "page" : undefined} className={tab(onApprovals)}>
          approvals{approvals ? ` (${approvals})` : ""}
        </Link>
      </nav>
      {onApprovals ? null : (
        <nav aria-label="Queue filters" className="-mx-1 flex gap-2 overflow-x-auto px-1 pb-1 text-sm sm:flex-wrap sm:overflow-visible">
          {QUEUE_FILTERS.map(([q, label]) => {
            const params = new URLSearchParams(q);
            if (order === "newest") params.set("order", "newest");
            return (
              <Link key={label} href={`/review${params.size ? `?${params}` : ""}`} aria-current={current === q ? "page" : undefined} className={pill(current === q)}>
                {q === "old=true" ? `over ${ageHours} h old` : label}
              </Link>
            );
          })}
        </nav>
      )}
    </div>
  );
}
