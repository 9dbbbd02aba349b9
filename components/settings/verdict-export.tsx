import Link from "@/components/shell/link";
import { TableScroll } from "@/components/ui/table-scroll";
import { When } from "@/components/ui/when";
import type { VerdictExportRow, VerdictExportStatus } from "@/lib/store/queries/verdict-exports";
import type { describeVerdictTarget } from "@/lib/verdicts/target";

const STATUS_STYLE: Record<VerdictExportStatus, string> = {
  delivered: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100",
  pending: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
  failed: "bg-rose-100 text-rose-900 dark:bg-rose-900 dark:text-rose-100",
};

type Props = { target: ReturnType<typeof describeVerdictTarget>; counts: Record<VerdictExportStatus, number>; items: VerdictExportRow[]; now: number };

/**
 * Verdicts out (docs/API.md "Verdicts out"): where the OpenTelemetry events go, how many are
 * pending, delivered and failed, and the latest, each with its operation, trace and last error.
 */
export function VerdictExportPanel({ target, counts, items, now }: Props) {
  return (
    <section id="verdicts" aria-labelledby="verdicts-title" className="space-y-3">
      <h2 id="verdicts-title" className="text-lg font-semibold">
        Verdicts to OpenTelemetry
      </h2>
      <p className="max-w-3xl text-sm text-slate-700 dark:text-slate-300">
        Each time an operation&rsquo;s verdict changes, Reconcile can send it as the OpenTelemetry GenAI event{" "}
        <code className="font-mono">gen_ai.evaluation.result</code>, under the agent&rsquo;s own tool-call span when the call came over OTLP or through
        the gateway with a trace, so the dashboards that already show your traces (an OpenTelemetry Collector, Langfuse, Phoenix…) show the
        verdict beside it. Events are kept until the receiver takes them and retried like webhooks.
      </p>
      {!target.enabled ? (
        <p className="rounded-xl border border-dashed border-slate-300 p-6 text-sm text-slate-700 dark:border-slate-700 dark:text-slate-300">
          Off. Set <code className="font-mono">RECONCILE_VERDICT_OTLP_ENDPOINT</code> (and, for credentials,{" "}
          <code className="font-mono">RECONCILE_VERDICT_OTLP_HEADERS</code>) on the server and restart it; docs/DEPLOY.md shows the settings for a
          Collector, Langfuse and Phoenix.
        </p>
      ) : (
        <>
          <dl className="grid gap-x-4 gap-y-1 text-sm sm:grid-cols-[10rem_1fr]">
            <dt className="text-slate-600 dark:text-slate-400">Sends to</dt>
            <dd className="min-w-0 break-all font-mono">{target.url ?? <>{target.host} <span className="font-sans text-slate-600 dark:text-slate-400">(its host; the whole URL is shown to instance admins)</span></>}</dd>
            <dt className="text-slate-600 dark:text-slate-400">Headers</dt>
            <dd>{target.header_names.length ? target.header_names.join(", ") : "none"} (values are not shown)</dd>
            <dt className="text-slate-600 dark:text-slate-400">Events</dt>
            <dd>
              {counts.pending} pending · {counts.delivered} delivered · {counts.failed} failed
            </dd>
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
