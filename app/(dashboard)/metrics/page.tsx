import { ProjectForm } from "@/components/shell/project-form";
import type { Metadata } from "next";
import Link from "@/components/shell/link";
import { can } from "@/lib/domain/permissions";
import { inProject } from "@/lib/store/db/project-context";
import { requirePage } from "@/lib/auth/session";
import { METRIC_NAMES, METRIC_TITLES, type Metric, type MetricName, type Metrics } from "@/lib/domain/metrics";
import { setSamplingAction } from "@/lib/actions/metrics";
import { metricsQuerySchema, readMetrics } from "@/lib/store/queries/metrics";
import { presenceOnlyVerified } from "@/lib/store/queries/presence-only";
import { periodStart } from "@/lib/store/queries/overview";
import { TableScroll } from "@/components/ui/table-scroll";
import { Warnings } from "@/components/ui/form";
import { describeRefusal } from "@/lib/domain/refusal";

export const metadata: Metadata = { title: "Metrics" };

const PERIODS = { "7d": 7, "30d": 30, "90d": 90, "365d": 365 } as const;
type Period = keyof typeof PERIODS | "all";

const link = "text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300";
const pct = (v: number | null) => (v === null ? "—" : `${(v * 100).toFixed(1)} %`);
const DAY_MS = 86_400_000;

/** What the paper asks of each metric, in a line. */
const MEANING: Record<MetricName, string> = {
  grounding_accuracy: "The agent's belief (its claimed outcome) matches whether the effect held. Higher is better.",
  silent_failure_rate: "The receipt said accepted, but the effect did not hold. Lower is better.",
  verification_precision: "Of the operations verification flagged divergent and a reviewer resolved, how many were really not applied.",
  verification_recall: "Of the failures reviewers know about (audit samples included), how many verification flagged.",
  recovery_rate: "Detected failures (divergent or rejected) later recovered: compensated, or a later verified retry.",
};

type Filters = { since?: string; until?: string; tool?: string; agent?: string };

/** The list of a figure's operations: its period on the same clock (the call's time). */
function listHref(metric: MetricName, part: string, f: Filters): string {
  const q = new URLSearchParams({ metric, part });
  if (f.since) q.set("called_since", f.since);
  if (f.until) q.set("called_until", f.until);
  if (f.tool) q.set("tool", f.tool);
  if (f.agent) q.set("agent", f.agent);
  return `/operations?${q}`;
}

function Figure({ m, f }: { m: Metric; f: Filters }) {
  const t = METRIC_TITLES[m.name];
  return (
    <li className="rounded-xl border border-slate-200 bg-white p-4 dark:border-slate-800 dark:bg-slate-900">
      <h3 className="text-sm font-medium text-slate-700 dark:text-slate-300">
        Metric {t.number}: {t.title}
      </h3>
      <p className="mt-1 text-3xl font-semibold tabular-nums">
        <Link className={link} href={listHref(m.name, "hit", f)} aria-label={`${t.title}: ${pct(m.value)}, the ${m.hit} operations where ${t.hit}`}>
          {pct(m.value)}
        </Link>
      </p>
      <p className="text-xs text-slate-700 dark:text-slate-300">{m.interval ? `95 % interval ${pct(m.interval.low)} – ${pct(m.interval.high)}` : "no operations to measure yet"}</p>
      <dl className="mt-3 grid grid-cols-2 gap-x-3 gap-y-1 text-sm">
        <dt>{t.hit}</dt>
        <dd className="text-right tabular-nums"><Link className={link} href={listHref(m.name, "hit", f)}>{m.hit.toLocaleString()}</Link></dd>
        <dt>n (measured)</dt>
        <dd className="text-right tabular-nums"><Link className={link} href={listHref(m.name, "n", f)}>{m.n.toLocaleString()}</Link></dd>
        {m.name !== "recovery_rate" ? (
          <>
            <dt>unknown, not in n</dt>
            <dd className="text-right tabular-nums"><Link className={link} href={listHref(m.name, "unknown", f)}>{m.unknown.toLocaleString()}</Link></dd>
          </>
        ) : null}
        <dt>from audit samples</dt>
        <dd className="text-right tabular-nums"><Link className={link} href={listHref(m.name, "samples", f)}>{m.from_samples.toLocaleString()}</Link></dd>
      </dl>
      <p className="mt-2 text-xs text-slate-700 dark:text-slate-300">{MEANING[m.name]}</p>
    </li>
  );
}

/** A compact cell: the value (linked to n's operations) and n. */
function Cell({ m, f }: { m: Metric; f: Filters }) {
  return (
    <td className="px-2 py-1.5 text-right tabular-nums">
      <Link className={link} href={listHref(m.name, "n", f)}>{pct(m.value)}</Link>
      <span className="block text-xs text-slate-700 dark:text-slate-300">n {m.n.toLocaleString()}{m.from_samples ? `, ${m.from_samples} sampled` : ""}</span>
    </td>
  );
}

function Table({ caption, first, rows }: { caption: string; first: string; rows: { key: string; label: string; operations: number; metrics: Metrics; f: Filters }[] }) {
  return (
    <TableScroll className="rounded-xl border border-slate-200 dark:border-slate-800">
      <table className="w-full min-w-[44rem] text-sm">
        <caption className="px-3 pt-3 text-left font-semibold">{caption}</caption>
        <thead>
          <tr className="border-b border-slate-200 text-left dark:border-slate-800">
            <th scope="col" className="px-2 py-2">{first}</th>
            <th scope="col" className="px-2 py-2 text-right">operations</th>
            {METRIC_NAMES.map((m) => (
              <th key={m} scope="col" className="px-2 py-2 text-right">
                {METRIC_TITLES[m].number}. {METRIC_TITLES[m].title}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr><td colSpan={7} className="px-2 py-3 text-slate-700 dark:text-slate-300">No operations in this period.</td></tr>
          ) : (
            rows.map((r) => (
              <tr key={r.key} className="border-b border-slate-100 last:border-0 dark:border-slate-800">
                <th scope="row" className="px-2 py-1.5 text-left font-medium">{r.label}</th>
                <td className="px-2 py-1.5 text-right tabular-nums">{r.operations.toLocaleString()}</td>
                {METRIC_NAMES.map((m) => <Cell key={m} m={r.metrics[m]} f={r.f} />)}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </TableScroll>
  );
}

export default async function MetricsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const me = await requirePage("operations:read", "/metrics");
  // Everything this page reads is its project's (lib/store/db/project-context.ts).
  return inProject(me.project, async () => {
    const sp = await searchParams;
    const pick = (k: string) => (typeof sp[k] === "string" && sp[k] !== "" ? (sp[k] as string) : undefined);
    const asked = pick("period");
    const period: Period = asked === "all" || (asked !== undefined && asked in PERIODS) ? (asked as Period) : "90d";
    const since = period === "all" ? undefined : periodStart(PERIODS[period as keyof typeof PERIODS]);
    const asQuery = { since, tool: pick("tool"), agent: pick("agent") };
    const parsed = metricsQuerySchema.safeParse(asQuery);
    const query = parsed.success ? parsed.data : { since };
    const [report, presence] = await Promise.all([readMetrics(query), presenceOnlyVerified(query)]);
    const f: Filters = { since: query.since, tool: query.tool, agent: query.agent };
    const keep = (more: Record<string, string>) => {
      const q = new URLSearchParams();
      if (query.tool) q.set("tool", query.tool);
      if (query.agent) q.set("agent", query.agent);
      for (const [k, v] of Object.entries(more)) q.set(k, v);
      return `/metrics?${q}`;
    };
    const samplingMessage = pick("sampling");
    const samplingWarnings = [sp.sampling_warning ?? []].flat().filter((w): w is string => typeof w === "string" && w !== "").slice(0, 5);

    return (
      <div className="space-y-8">
        <div className="flex flex-wrap items-end justify-between gap-4">
          <div>
            <h1 className="text-2xl font-semibold">Metrics</h1>
            <p className="mt-1 max-w-3xl text-slate-700 dark:text-slate-300">
              The paper&apos;s Metrics 1–5 of tool grounding, from {report.operations.toLocaleString()} operations
              {period === "all" ? " (all time)" : ` called in the last ${PERIODS[period as keyof typeof PERIODS]} days`}
              {query.tool ? `, tool ${query.tool}` : ""}
              {query.agent ? `, agent ${query.agent}` : ""}. Periods and weeks go by the day of the call (the receipt&apos;s time, or when it was recorded if no receipt came; UTC), as on the overview. Reviewers&apos; resolutions are the ground truth; what nobody knows is counted apart as unknown. Every number opens its operations.
            </p>
            {!parsed.success ? <p role="alert" className="mt-2 text-rose-700 dark:text-rose-300">The filters were not valid and are ignored: {describeRefusal(parsed.error, { input: asQuery, schema: metricsQuerySchema, root: "filters", key: "filter" }).message}.</p> : null}
          </div>
          <nav aria-label="Period" className="flex flex-wrap gap-1 text-sm">
            {([...Object.keys(PERIODS), "all"] as Period[]).map((p) => (
              <Link key={p} href={keep({ period: p })} aria-current={p === period ? "page" : undefined} className={`rounded-md px-3 py-1.5 ${p === period ? "bg-slate-200 font-medium dark:bg-slate-800" : "hover:bg-slate-100 dark:hover:bg-slate-900"}`}>
                {p === "all" ? "all time" : `last ${PERIODS[p as keyof typeof PERIODS]} days`}
              </Link>
            ))}
          </nav>
        </div>

        <ProjectForm method="get" action="/metrics" className="flex flex-wrap items-end gap-3 text-sm" aria-label="Filter metrics">
          <input type="hidden" name="period" value={period} />
          <label className="flex flex-col gap-1">
            Tool
            <input name="tool" defaultValue={query.tool ?? ""} className="rounded-md border border-slate-300 px-2 py-1.5 dark:border-slate-700 dark:bg-slate-900" />
          </label>
          <label className="flex flex-col gap-1">
            Agent
            <input name="agent" defaultValue={query.agent ?? ""} className="rounded-md border border-slate-300 px-2 py-1.5 dark:border-slate-700 dark:bg-slate-900" />
          </label>
          <button type="submit" className="rounded-md bg-slate-900 px-3 py-1.5 font-medium text-white dark:bg-slate-100 dark:text-slate-900">Apply</button>
          {query.tool || query.agent ? <Link className={link} href={`/metrics?period=${period}`}>Clear</Link> : null}
        </ProjectForm>

        <section aria-labelledby="figures">
          <h2 id="figures" className="sr-only">The five metrics</h2>
          <ul className="grid gap-4 sm:grid-cols-2 xl:grid-cols-5">
            {METRIC_NAMES.map((m) => <Figure key={m} m={report.metrics[m]} f={f} />)}
          </ul>
          <p className="mt-3 max-w-3xl text-sm text-slate-700 dark:text-slate-300" data-testid="presence-only">
            Verified by presence only: {presence.presence_only.toLocaleString("en")} of {presence.verified.toLocaleString("en")} operations verified by their canonical read
            (their intent named no fingerprint, so the read showed the object without its content being compared).
          </p>
        </section>

        <Table
          caption="Per week of the call (weeks start Monday, UTC)"
          first="week of"
          rows={[...report.weekly].reverse().map((w) => {
            const start = `${w.week}T00:00:00.000Z`;
            const end = new Date(Date.parse(start) + 7 * DAY_MS).toISOString();
            const wf: Filters = { ...f, since: f.since && f.since > start ? f.since : start, until: end };
            return { key: w.week, label: w.week, operations: w.operations, metrics: w.metrics, f: wf };
          })}
        />
        <Table caption="Per tool" first="tool" rows={report.by_tool.filter((t) => t.tool !== null).map((t) => ({ key: t.tool!, label: t.tool!, operations: t.operations, metrics: t.metrics, f: { ...f, tool: t.tool! } }))} />
        <Table caption="Per agent" first="agent" rows={report.by_agent.filter((a) => a.agent !== null).map((a) => ({ key: a.agent!, label: a.agent!, operations: a.operations, metrics: a.metrics, f: { ...f, agent: a.agent! } }))} />

        <section aria-labelledby="sampling" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
          <h2 id="sampling" className="font-semibold">Audit sampling</h2>
          <p className="mt-1 max-w-3xl text-sm text-slate-700 dark:text-slate-300">
            Verified operations rarely reach a reviewer, so recall measured on the review queue alone is biased. A share of each tool&apos;s verified operations is drawn into the{" "}
            <Link className={`${link} underline`} href="/operations?audit_sample=true&needs_review=true">review queue as audit samples</Link>; their resolutions count as ground truth. The cards say how much of each figure rests on samples.
          </p>
          {report.sampling.length ? (
            <ul className="mt-3 text-sm">
              {report.sampling.map((s) => (
                <li key={s.tool}>
                  <Link className={`${link} underline`} href={`/operations?audit_sample=true&tool=${encodeURIComponent(s.tool)}`}>{s.tool}</Link>: {(s.rate * 100).toLocaleString()} % of verified operations
                </li>
              ))}
            </ul>
          ) : (
            <p className="mt-3 text-sm">No tool is sampled.</p>
          )}
          {samplingMessage ? <p role="status" className="mt-3 text-sm font-medium">{samplingMessage}</p> : null}
          {samplingWarnings.length ? <div className="mt-2"><Warnings warnings={samplingWarnings} /></div> : null}
          {can(me, "metrics:sampling") ? (
            <form action={setSamplingAction} className="mt-4 flex flex-wrap items-end gap-3 text-sm" aria-label="Set a sampling rate">
              <label className="flex flex-col gap-1">
                Tool
                <input name="tool" required maxLength={200} className="rounded-md border border-slate-300 px-2 py-1.5 dark:border-slate-700 dark:bg-slate-900" />
              </label>
              <label className="flex flex-col gap-1">
                Percent of verified operations
                <input name="percent" type="number" min={0} max={100} step="0.1" required className="w-32 rounded-md border border-slate-300 px-2 py-1.5 dark:border-slate-700 dark:bg-slate-900" />
              </label>
              <button type="submit" className="rounded-md bg-slate-900 px-3 py-1.5 font-medium text-white dark:bg-slate-100 dark:text-slate-900">Set rate</button>
            </form>
          ) : null}
        </section>
      </div>
    );
  });
}
