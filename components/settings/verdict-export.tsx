import Link from "@/components/shell/link";
import { TableScroll } from "@/components/ui/table-scroll";
import { When } from "@/components/ui/when";
import type { VerdictCounts, VerdictExportRow, VerdictExportStatus } from "@/lib/store/queries/verdict-exports";
import type { describeVerdictTargets } from "@/lib/verdicts/target";

const STATUS_STYLE: Record<VerdictExportStatus, string> = {
  delivered: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100",
  pending: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
  failed: "bg-rose-100 text-rose-900 dark:bg-rose-900 dark:text-rose-100",
  not_exportable: "bg-slate-200 text-slate-900 dark:bg-slate-700 dark:text-slate-100",
  superseded: "bg-slate-100 text-slate-800 dark:bg-slate-800 dark:text-slate-200",
};

const NAME = { otlp: "OTLP logs", phoenix: "Phoenix", langfuse: "Langfuse" } as const;

type Props = { targets: ReturnType<typeof describeVerdictTargets>; counts: (VerdictCounts & { by_target: Record<string, VerdictCounts> }) | null; items: VerdictExportRow[]; now: number };

/**
 * Verdicts out (docs/API.md "Verdicts out"): where the OpenTelemetry events go, how many are
 * pending, delivered and failed, and the latest, each with its operation, trace and last error.
 */
export function VerdictExportPanel({ targets, counts, items, now }: Props) {
  const on = targets.filter((t) => t.enabled);
  return (
    <section id="verdicts" aria-labelledby="verdicts-title" className="space-y-3">
      <h2 id="verdicts-title" className="text-lg font-semibold">
        Verdicts out
      </h2>
      <p className="max-w-3xl text-sm text-slate-700 dark:text-slate-300">
        Each time an operation&rsquo;s verdict changes, Reconcile can send it: as the OpenTelemetry GenAI event{" "}
        <code className="font-mono">gen_ai.evaluation.result</code> in OTLP logs (for an OpenTelemetry Collector), as a span annotation in Phoenix,
        and as a score in Langfuse, on the agent&rsquo;s own tool-call span when the call came over OTLP or through the gateway with a trace.
        Phoenix and Langfuse need that span: an operation without one is listed as not exportable there. Events are kept until the receiver
        takes them and retried like webhooks.
      </p>
      {!on.length || !counts ? (
        <p className="rounded-xl border border-dashed border-slate-300 p-6 text-sm text-slate-700 dark:border-slate-700 dark:text-slate-300">
          Off. Set <code className="font-mono">RECONCILE_VERDICT_OTLP_ENDPOINT</code>, <code className="font-mono">RECONCILE_VERDICT_PHOENIX_URL</code> or{" "}
          <code className="font-mono">RECONCILE_VERDICT_LANGFUSE_URL</code> on the server and restart it; docs/DEPLOY.md shows each one&rsquo;s settings.
        </p>
      ) : (
        <>
          <dl className="grid gap-x-4 gap-y-1 text-sm sm:grid-cols-[10rem_1fr]">
            {on.map((t) => {
              const c = counts.by_target[t.kind];
              const where = t.url ?? (
                <>
                  {t.host} <span className="font-sans text-slate-600 dark:text-slate-400">(its host; the whole URL is shown to instance admins)</span>
                </>
              );
              return t.kind === "otlp" ? (
                <div key={t.kind} className="contents">
                  <dt className="text-slate-600 dark:text-slate-400">Sends to</dt>
                  <dd className="min-w-0 break-all font-mono">{where}</dd>
                  <dt className="text-slate-600 dark:text-slate-400">Headers</dt>
                  <dd>{t.header_names.length ? t.header_names.join(", ") : "none"} (values are not shown)</dd>
                  <dt className="text-slate-600 dark:text-slate-400">Events</dt>
                  <dd>
                    {c.pending} pending · {c.delivered} delivered · {c.failed} failed
                  </dd>
                </div>
              ) : (
                <div key={t.kind} className="contents">
                  <dt className="text-slate-600 dark:text-slate-400">{NAME[t.kind]}</dt>
                  <dd className="min-w-0 break-all font-mono">{where}</dd>
                  <dt className="text-slate-600 dark:text-slate-400">{NAME[t.kind]} events</dt>
                  <dd>
                    {c.pending} pending · {c.delivered} delivered · {c.failed} failed · {c.not_exportable} not exportable (no span) · {c.superseded} superseded
                  </dd>
                </div>
              );
            })}
          </dl>
          {items.length === 0 ? (
            <p className="rounded-xl border border-dashed border-slate-300 p-6 text-sm text-slate-700 dark:border-slate-700 dark:text-slate-300">
              No verdict has changed since the export was turned on.
            </p>
          ) : (
            <TableScroll>
              <table className="w-full text-left text-sm">
                <caption className="sr-only">The latest verdict events, newest first</caption>
                <thead>
                  <tr className="text-slate-600 dark:text-slate-400">
                    <th className="py-1 pr-3 font-medium">Target</th>
                    <th className="py-1 pr-3 font-medium">Operation</th>
                    <th className="py-1 pr-3 font-medium">Verdict</th>
                    <th className="py-1 pr-3 font-medium">Status</th>
                    <th className="py-1 pr-3 font-medium">When</th>
                    <th className="py-1 pr-3 font-medium">Trace</th>
                    <th className="py-1 font-medium">Last error</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((i) => (
                    <tr key={i.id} className="border-t border-slate-100 align-top dark:border-slate-800">
                      <td className="py-1 pr-3 whitespace-nowrap">{NAME[i.target] ?? i.target}</td>
                      <td className="max-w-64 py-1 pr-3 break-all font-mono text-xs">
                        <Link href={`/operations/${encodeURIComponent(i.operation_id)}`} className="text-indigo-700 underline dark:text-indigo-300">
                          {i.operation_id}
                        </Link>
                      </td>
                      <td className="py-1 pr-3">{i.outcome}</td>
                      <td className="py-1 pr-3 whitespace-nowrap">
                        <span className={`rounded-full px-2 py-0.5 text-xs font-medium ${STATUS_STYLE[i.status]}`}>{i.status}</span>
                        <span className="ml-1 text-xs text-slate-600 dark:text-slate-400">
                          {i.attempts} {i.attempts === 1 ? "attempt" : "attempts"}
                        </span>
                      </td>
                      <td className="py-1 pr-3 whitespace-nowrap">
                        <When at={i.created_at} now={now} />
                      </td>
                      <td className="py-1 pr-3 font-mono text-xs" title={`trace ${i.trace_id}, span ${i.span_id}`}>
                        {i.trace_id.slice(0, 8)}…{i.parented ? " (agent's span)" : " (its own)"}
                      </td>
                      <td className="py-1 break-all font-mono text-xs">{i.last_error ?? ""}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )}
        </>
      )}
    </section>
  );
}
