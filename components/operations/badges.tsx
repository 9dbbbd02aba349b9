import { FAILURE_CATEGORIES, type FailureCategory } from "@/lib/domain/outcomes";

const OUTCOME_STYLE: Record<string, string> = {
  verified: "bg-emerald-100 text-emerald-900 ring-emerald-300 dark:bg-emerald-950 dark:text-emerald-200 dark:ring-emerald-800",
  uncertain: "bg-amber-100 text-amber-900 ring-amber-300 dark:bg-amber-950 dark:text-amber-200 dark:ring-amber-800",
  divergent: "bg-rose-100 text-rose-900 ring-rose-300 dark:bg-rose-950 dark:text-rose-200 dark:ring-rose-800",
  rejected: "bg-slate-200 text-slate-800 ring-slate-300 dark:bg-slate-800 dark:text-slate-200 dark:ring-slate-700",
  not_applied: "bg-sky-100 text-sky-900 ring-sky-300 dark:bg-sky-950 dark:text-sky-200 dark:ring-sky-800",
  compensated: "bg-violet-100 text-violet-900 ring-violet-300 dark:bg-violet-950 dark:text-violet-200 dark:ring-violet-800",
};

export function OutcomeBadge({ outcome }: { outcome: string | null }) {
  const label = outcome ? outcome.replace("_", " ") : "not recorded";
  return (
    <span className={`inline-block whitespace-nowrap rounded px-2 py-0.5 text-xs font-semibold ring-1 ring-inset ${OUTCOME_STYLE[outcome ?? ""] ?? "bg-slate-100 text-slate-700 ring-slate-300 dark:bg-slate-900 dark:text-slate-300 dark:ring-slate-700"}`}>
      {label}
    </span>
  );
}

export function categoryName(category: number | null): string | null {
  return category ? `${category} · ${FAILURE_CATEGORIES[category as FailureCategory]}` : null;
}
