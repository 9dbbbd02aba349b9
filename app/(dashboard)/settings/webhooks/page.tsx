import type { Metadata } from "next";
import Link from "@/components/shell/link";
import { CreateWebhookForm, EditWebhookForm, EndpointActions } from "@/components/settings/webhooks";
import { DeliveryLog } from "@/components/settings/webhook-log";
import { RotateSecretForm } from "@/components/settings/webhook-secret";
import { envSetting } from "@/lib/domain/settings";
import { inProject } from "@/lib/store/db/project-context";
import { requirePage } from "@/lib/auth/session";
import { listDeliveries, listEndpoints } from "@/lib/store/settings/webhooks";
import type { Endpoint } from "@/lib/views/webhooks";
import { VerdictExportPanel } from "@/components/settings/verdict-export";
import { renderedAt } from "@/components/ui/when";
import { listVerdictExports, verdictExportCounts } from "@/lib/store/queries/verdict-exports";
import { describeVerdictTargets } from "@/lib/verdicts/target";
import { can } from "@/lib/domain/permissions";

export const metadata: Metadata = { title: "Webhooks" };

const utc = (iso: string) => iso.replace("T", " ").replace(/\.\d+Z$/, " UTC");

function filtersText(e: Endpoint): string {
  const f = e.filters;
  const parts = [
    f.event_types.length ? f.event_types.join(", ") : "every event",
    f.outcomes.length ? `outcome ${f.outcomes.join(" or ")}` : null,
    f.tools.length ? `tool ${f.tools.join(" or ")}` : null,
    f.agents.length ? `agent ${f.agents.join(" or ")}` : null,
  ];
  return parts.filter(Boolean).join("; ");
}

export default async function WebhooksPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const me = await requirePage("webhooks:manage", "/settings/webhooks");
  // Everything this page reads is its project's (lib/store/db/project-context.ts).
  return inProject(me.project, async () => {
    const endpoints = await listEndpoints();
    const asked = (await searchParams).endpoint;
    const selected = endpoints.find((e) => e.id === asked) ?? endpoints[0] ?? null;
    const log = selected ? await listDeliveries(selected.id, { limit: 50 }) : [];
    const overlapHours = envSetting("RECONCILE_WEBHOOK_SECRET_OVERLAP_HOURS");
    // The endpoint is the instance's: its whole URL for instance admins, its host for a project's admins.
    const verdictTargets = describeVerdictTargets({ whole: can(me, "instance:audit") });
    const [verdicts, verdictCounts] = verdictTargets.some((t) => t.enabled) ? await Promise.all([listVerdictExports({ limit: 20 }), verdictExportCounts()]) : [[], null];
    return (
      <div className="space-y-8">
        <div>
          <h1 className="text-2xl font-semibold">Webhooks</h1>
          <p className="mt-1 max-w-3xl text-slate-700 dark:text-slate-300">
            Tell other systems when an operation needs review, a verdict changes, a reviewer corrects one, a checkpoint is signed or the audit
            chain fails verification. Every request is signed (Standard Webhooks) and retried for a day until the receiver answers 2xx; a 410
            answer disables the endpoint.
          </p>
        </div>

        <section aria-labelledby="endpoints" className="space-y-3">
          <h2 id="endpoints" className="text-lg font-semibold">
            Endpoints
          </h2>
          {endpoints.length === 0 ? (
            <p className="rounded-xl border border-dashed border-slate-300 p-6 text-slate-700 dark:border-slate-700 dark:text-slate-300">
              No endpoints yet. Add one below; its signing secret is shown once, when it is created.
            </p>
          ) : (
            <ul className="space-y-3">
              {endpoints.map((e) => (
                <li key={e.id} className="rounded-xl border border-slate-200 p-4 dark:border-slate-800" aria-labelledby={`ep-${e.id}`}>
                  <div className="flex flex-wrap items-baseline justify-between gap-2">
                    <h3 id={`ep-${e.id}`} className="break-all font-mono text-sm font-medium">
                      {e.url}
                    </h3>
                    <span
                      className={`rounded-full px-2 py-0.5 text-xs font-medium ${e.enabled ? "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100" : "bg-slate-200 text-slate-800 dark:bg-slate-800 dark:text-slate-200"}`}
                    >
                      {e.enabled ? "enabled" : "disabled"}
                    </span>
                  </div>
                  {e.description ? <p className="mt-1 text-sm break-words text-slate-700 dark:text-slate-300 [overflow-wrap:anywhere]">{e.description}</p> : null}
                  <dl className="mt-2 grid gap-x-4 gap-y-1 text-sm sm:grid-cols-[10rem_1fr]">
                    <dt className="text-slate-600 dark:text-slate-400">Sends</dt>
                    <dd className="min-w-0 [overflow-wrap:anywhere]">{filtersText(e)}</dd>
                    <dt className="text-slate-600 dark:text-slate-400">Format</dt>
                    <dd>{e.format === "slack" ? "Slack text" : "Standard Webhooks JSON"}</dd>
                    <dt className="text-slate-600 dark:text-slate-400">Secret</dt>
                    <dd className="font-mono">{e.secret_hint}</dd>
                    {e.previous_secret ? (
                      <>
                        <dt className="text-slate-600 dark:text-slate-400">Old secret</dt>
                        <dd>
                          <span className="font-mono">{e.previous_secret.hint}</span> still signs too, until{" "}
                          <time dateTime={e.previous_secret.accepted_until}>{utc(e.previous_secret.accepted_until)}</time>
                        </dd>
                      </>
                    ) : null}
                    {e.disabled_reason ? (
                      <>
                        <dt className="text-slate-600 dark:text-slate-400">Why disabled</dt>
                        <dd>{e.disabled_reason}</dd>
                      </>
                    ) : null}
                  </dl>
                  <div className="mt-3 flex flex-wrap items-start gap-3">
                    <EndpointActions id={e.id} url={e.url} enabled={e.enabled} />
                    {selected?.id === e.id ? (
                      <span className="self-center text-sm text-slate-600 dark:text-slate-400">Delivery log shown below</span>
                    ) : (
                      <Link href={`/settings/webhooks?endpoint=${encodeURIComponent(e.id)}#log`} className="self-center text-sm text-indigo-700 underline dark:text-indigo-300">
                        Delivery log
                      </Link>
                    )}
                    <RotateSecretForm id={e.id} url={e.url} defaultOverlapHours={overlapHours} />
                    <EditWebhookForm
                      id={e.id}
                      values={{
                        url: e.url,
                        description: e.description,
                        format: e.format,
                        event_types: e.filters.event_types.join(","),
                        outcomes: e.filters.outcomes.join(","),
                        tools: e.filters.tools.join(", "),
                        agents: e.filters.agents.join(", "),
                      }}
                    />
                  </div>
                </li>
              ))}
            </ul>
          )}
        </section>

        {selected ? <DeliveryLog endpoint={selected} deliveries={log} /> : null}

        <section aria-labelledby="add-endpoint" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
          <h2 id="add-endpoint" className="mb-3 text-lg font-semibold">
            Add an endpoint
          </h2>
          <CreateWebhookForm />
        </section>

        <VerdictExportPanel targets={verdictTargets} counts={verdictCounts} items={verdicts} now={renderedAt()} />
      </div>
    );
  });
}
