import type { Metadata } from "next";
import Link from "@/components/shell/link";
import { SilentFailureChart } from "@/components/overview/silent-failure-chart";
import { inProject } from "@/lib/store/db/project-context";
import { requirePage } from "@/lib/auth/session";
import { EFFECTIVE_OUTCOMES } from "@/lib/domain/outcomes";
import { hasOperations, outcomeCounts, periodStart, reviewCounts, silentFailureRate, topDivergentTools } from "@/lib/store/queries/overview";
import { WaysIn } from "@/components/overview/ways-in";

export const metadata: Metadata = { title: "Overview" };

const PERIODS = { "7d": 7, "30d": 30, "90d": 90 } as const;
type Period = keyof typeof PERIODS;

const STYLE: Record<string, string> = {
  verified: "border-l-emerald-500",
  uncertain: "border-l-amber-500",
  divergent: "border-l-rose-500",
  rejected: "border-l-slate-400",
  not_applied: "border-l-sky-500",
  compensated: "border-l-violet-500",
};

const link = "text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300";
/** A label and its number as one link, so either can be clicked. */
const row = "group flex justify-between gap-4 rounded-sm";
const rowLabel = "text-indigo-700 underline-offset-2 group-hover:underline dark:text-indigo-300";

export default async function Overview({ searchParams }: { searchParams: Promise<{ period?: string }> }) {
  const me = await requirePage("operations:read");
  // Everything this page reads is its project's (lib/store/db/project-context.ts).
  return inProject(me.project, async () => {
    const requested = (await searchParams).period;
    const period: Period = requested && requested in PERIODS ? (requested as Period) : "30d";
    const since = periodStart(PERIODS[period]);
    const [counts, review, silent, tools, any] = await Promise.all([outcomeCounts(since), reviewCounts(), silentFailureRate(since), topDivergentTools(since), hasOperations()]);
    // One clock: every figure here counts an operation on the day of its call (the receipt's time,
    // else when it was recorded), as /metrics does, and links to the list on that clock.
    const calledQ = `called_since=${encodeURIComponent(since.slice(0, 10) + "T00:00:00Z")}`;
    const accepted = silent.reduce((a, d) => a + d.accepted, 0);
    const silentTotal = silent.reduce((a, d) => a + d.silent, 0);
    const unknown = silent.reduce((a, d) => a + d.unknown, 0);

    return (
      <div className="space-y-8">
        <div className="flex flex-wrap items-end justify-between gap-4">
          <div>
            <h1 className="text-2xl font-semibold">Overview</h1>
            <p className="mt-1 text-slate-700 dark:text-slate-300">
              {counts.total === 0
                ? any
                  ? `No operations called in the last ${PERIODS[period]} days.`
                  : "No operations yet: send this project its first one (below)."
                : `${counts.total.toLocaleString()} operations called in the last ${PERIODS[period]} days. Every figure on this page, as on Metrics, counts an operation on the day of its call (the receipt's time, or when it was recorded if no receipt came), in UTC.`}
            </p>
          </div>
          <nav aria-label="Period" className="flex gap-1 text-sm">
            {(Object.keys(PERIODS) as Period[]).map((p) => (
              <Link key={p} href={`/?period=${p}`} aria-current={p === period ? "page" : undefined} className={`rounded-md px-3 py-1.5 ${p === period ? "bg-slate-200 font-medium dark:bg-slate-800" : "hover:bg-slate-100 dark:hover:bg-slate-900"}`}>
                last {PERIODS[p]} days
              </Link>
            ))}
          </nav>
        </div>

        {any ? null : <WaysIn tokensHref="/settings/tokens" />}

        {/* Two columns on a phone (a 2×3 grid), three on a tablet, six on a wide screen. */}
        <ul className="grid grid-cols-2 gap-2 sm:grid-cols-3 sm:gap-3 lg:grid-cols-6" aria-label="Operations by effective outcome">
          {EFFECTIVE_OUTCOMES.map((outcome) => (
            <li key={outcome}>
              <Link href={`/operations?outcome=${outcome}&${calledQ}`} className={`block rounded-lg border border-l-4 border-slate-200 bg-white px-3 py-2 sm:p-4 hover:bg-slate-50 dark:border-slate-800 dark:bg-slate-900 dark:hover:bg-slate-800 ${STYLE[outcome]}`}>
                <span className="block text-sm text-slate-700 dark:text-slate-300">{outcome.replace("_", " ")}</span>
                <span className="block text-2xl font-semibold tabular-nums">{counts.byOutcome[outcome].toLocaleString()}</span>
              </Link>
            </li>
          ))}
        </ul>

        <div className="grid gap-6 lg:grid-cols-3">
          <section aria-labelledby="backlog" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
            <h2 id="backlog" className="font-semibold">Review backlog</h2>
            <p className="mt-1 text-sm text-slate-700 dark:text-slate-300">All time: what still needs a person.</p>
            <ul className="mt-3 space-y-2 text-sm">
              <li><Link className={row} href="/review?outcome=divergent"><span className={rowLabel}>divergent, not resolved</span><span className="tabular-nums font-semibold">{review.divergent}</span></Link></li>
              <li><Link className={row} href="/review?outcome=uncertain"><span className={rowLabel}>uncertain, not resolved</span><span className="tabular-nums font-semibold">{review.uncertain}</span></Link></li>
              <li><Link className={row} href="/review?overclaimed=true"><span className={rowLabel}>overclaimed successes</span><span className="tabular-nums font-semibold">{review.overclaimed}</span></Link></li>
              <li className="border-t border-slate-200 pt-2 dark:border-slate-800"><Link className={row} href="/review"><span className={rowLabel}>the whole queue</span><span className="tabular-nums font-semibold">{review.total}</span></Link></li>
            </ul>
          </section>
          <section aria-labelledby="silent" className="rounded-xl border border-slate-200 p-4 lg:col-span-2 dark:border-slate-800">
            <h2 id="silent" className="font-semibold">Silent-failure rate</h2>
            <p className="mt-1 text-sm text-slate-700 dark:text-slate-300">
              Metric 2: accepted receipts whose effect did not hold, of those whose effect is known, by the day of the call:{" "}
              <Link className={`${link} underline`} href={`/operations?metric=silent_failure_rate&part=hit&${calledQ}`}>
                {silentTotal.toLocaleString()} silent failures
              </Link>{" "}
              of{" "}
              <Link className={`${link} underline`} href={`/operations?metric=silent_failure_rate&part=n&${calledQ}`}>
                {accepted.toLocaleString()} accepted receipts
              </Link>{" "}
              ({accepted ? ((silentTotal / accepted) * 100).toFixed(1) : "0"}%) in the period
              {unknown ? (
                <>
                  ;{" "}
                  <Link className={`${link} underline`} href={`/operations?metric=silent_failure_rate&part=unknown&${calledQ}`}>
                    {unknown.toLocaleString()} more
                  </Link>{" "}
                  whose effect is not known yet
                </>
              ) : null}
              .
            </p>
            <div className="mt-3">
              <SilentFailureChart data={silent} />
            </div>
          </section>
        </div>

        <section aria-labelledby="tools" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
          <h2 id="tools" className="font-semibold">Tools by divergence</h2>
          {tools.length === 0 ? (
            <p className="mt-1 text-sm text-slate-700 dark:text-slate-300">No divergent operations in this period.</p>
          ) : (
            <ol className="mt-2 space-y-1 text-sm">
              {tools.map((t) => (
                <li key={t.tool} className="max-w-sm">
                  <Link className={row} href={`/operations?tool=${encodeURIComponent(t.tool)}&outcome=divergent&${calledQ}`}>
                    <span className={`${rowLabel} font-mono`}>{t.tool}</span>
                    <span className="tabular-nums font-semibold">{t.divergent}</span>
                  </Link>
                </li>
              ))}
            </ol>
          )}
        </section>
      </div>
    );
  });
}
