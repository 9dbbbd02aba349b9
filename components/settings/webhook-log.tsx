import type { Delivery, Endpoint } from "@/lib/views/webhooks";
import { RedeliverButton } from "./webhooks";
import { TableScroll } from "@/components/ui/table-scroll";

const STATUS_STYLE: Record<Delivery["status"], string> = {
  delivered: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100",
  pending: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
  failed: "bg-rose-100 text-rose-900 dark:bg-rose-900 dark:text-rose-100",
  cancelled: "bg-slate-200 text-slate-800 dark:bg-slate-800 dark:text-slate-200",
};

const time = (iso: string) => iso.replace("T", " ").replace(/\.\d+Z$/, " UTC");

/** One endpoint's deliveries, newest first, each with every attempt: status, latency, the answer's start. */
export function DeliveryLog({ endpoint, deliveries }: { endpoint: Endpoint; deliveries: Delivery[] }) {
  return (
    <section id="log" aria-labelledby="log-title" className="space-y-3">
      <h2 id="log-title" className="text-lg font-semibold">
        Delivery log: <span className="break-all font-mono text-base">{endpoint.url}</span>
      </h2>
      {deliveries.length === 0 ? (
        <p className="rounded-xl border border-dashed border-slate-300 p-6 text-slate-700 dark:border-slate-700 dark:text-slate-300">
          Nothing sent to this endpoint yet. &ldquo;Send a test event&rdquo; sends one now.
        </p>
      ) : (
        <ol className="space-y-2">
          {deliveries.map((d) => (
            <li key={d.id} className="rounded-lg border border-slate-200 p-3 text-sm dark:border-slate-800">
              <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
                <span className={`rounded-full px-2 py-0.5 text-xs font-medium ${STATUS_STYLE[d.status]}`}>{d.status}</span>
                <code className="font-mono">{d.type}</code>
                <span className="text-slate-600 dark:text-slate-400">{time(d.created_at)}</span>
                <span className="break-all font-mono text-xs text-slate-600 dark:text-slate-400" title="webhook-id">
                  {d.webhook_id}
                </span>
                {d.status === "pending" && d.next_at ? <span className="text-slate-600 dark:text-slate-400">next attempt {time(d.next_at)}</span> : null}
                <span className="ml-auto">
                  <RedeliverButton endpoint={endpoint.id} delivery={d.id} what={`${d.type} of ${time(d.created_at)}`} />
                </span>
              </div>
              {d.attempt_log.length ? (
                <TableScroll className="mt-2">
                <table className="w-full text-left text-xs">
                  <caption className="sr-only">Attempts of this delivery</caption>
                  <thead>
                    <tr className="text-slate-600 dark:text-slate-400">
                      <th className="py-1 pr-3 font-medium">#</th>
                      <th className="py-1 pr-3 font-medium">When</th>
                      <th className="py-1 pr-3 font-medium">Status</th>
                      <th className="py-1 pr-3 font-medium">Latency</th>
                      <th className="py-1 font-medium">Answer</th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.attempt_log.map((a) => (
                      <tr key={a.n} className="border-t border-slate-100 align-top dark:border-slate-800">
                        <td className="py-1 pr-3">{a.n}</td>
                        <td className="py-1 pr-3 whitespace-nowrap">{time(a.at)}</td>
                        <td className="py-1 pr-3">{a.status_code ?? "no answer"}</td>
                        <td className="py-1 pr-3">{a.ms} ms</td>
                        <td className="py-1 break-all font-mono">{(a.excerpt || a.error || "").slice(0, 300)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                </TableScroll>
              ) : (
                <p className="mt-1 text-slate-600 dark:text-slate-400">Not attempted yet.</p>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
