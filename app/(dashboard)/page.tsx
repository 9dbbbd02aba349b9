import type { Metadata } from "next";
import { requirePage } from "@/lib/auth/session";
import { outcomeCounts } from "@/lib/store/overview";

export const metadata: Metadata = { title: "Overview" };

const STYLE: Record<string, string> = {
  verified: "border-emerald-300 dark:border-emerald-800",
  uncertain: "border-amber-300 dark:border-amber-800",
  divergent: "border-rose-300 dark:border-rose-800",
  rejected: "border-slate-300 dark:border-slate-700",
  not_applied: "border-slate-300 dark:border-slate-700",
  compensated: "border-slate-300 dark:border-slate-700",
};

export default async function Overview() {
  await requirePage("operations:read");
  const { byOutcome, needsReview, total } = await outcomeCounts();
  return (
    <div className="space-y-8">
      <div>
        <h1 className="text-2xl font-semibold">Overview</h1>
        <p className="mt-1 text-slate-700 dark:text-slate-300">
          {total === 0
            ? "No operations yet. Send receipts to POST /api/v1/receipts with a token that has the ingest scope (API tokens, above)."
            : `${total.toLocaleString()} operations recorded; ${needsReview.toLocaleString()} need a person to reconcile them.`}
        </p>
      </div>
      <ul className="grid gap-3 sm:grid-cols-3 lg:grid-cols-6" aria-label="Operations by effective outcome">
        {Object.entries(byOutcome).map(([outcome, n]) => (
          <li key={outcome} className={`rounded-lg border-l-4 border bg-white p-4 dark:bg-slate-900 ${STYLE[outcome]}`}>
            <p className="text-sm text-slate-700 dark:text-slate-300">{outcome.replace("_", " ")}</p>
            <p className="text-2xl font-semibold tabular-nums">{n.toLocaleString()}</p>
          </li>
        ))}
      </ul>
    </div>
  );
}
