import Link from "@/components/shell/link";

/** The review queue's filters, and the Approvals tab (held calls waiting for a reviewer). */
export const QUEUE_FILTERS = [
  ["", "everything"],
  ["outcome=divergent", "divergent"],
  ["outcome=uncertain", "uncertain"],
  ["outcome=rejected", "rejected, success claimed"],
  ["overclaimed=true", "overclaimed successes"],
  ["assigned=me", "assigned to me"],
] as const;

const tab = (on: boolean) => `rounded-full border px-3 py-1 ${on ? "border-indigo-500 bg-indigo-50 font-medium dark:bg-indigo-950" : "border-slate-300 dark:border-slate-700"}`;

export function QueueTabs({ current, approvals }: { current: string | "approvals"; approvals: number }) {
  return (
    <nav aria-label="Queue filters" className="flex flex-wrap gap-2 text-sm">
      {QUEUE_FILTERS.map(([q, label]) => (
        <Link key={label} href={`/review${q ? `?${q}` : ""}`} aria-current={current === q ? "page" : undefined} className={tab(current === q)}>
          {label}
        </Link>
      ))}
      <Link href="/review/approvals" aria-current={current === "approvals" ? "page" : undefined} className={tab(current === "approvals")}>
        approvals{approvals ? ` (${approvals})` : ""}
      </Link>
    </nav>
  );
}
