import type { Metadata } from "next";
import { VerifyButton } from "@/components/audit/verify-button";
import { TableScroll } from "@/components/ui/table-scroll";
import { renderedAt, When } from "@/components/ui/when";
import { requirePage } from "@/lib/auth/session";
import { eventSummary, type SecurityEvent } from "@/lib/domain/security-events";
import { instanceChainHead, latestInstanceEvents } from "@/lib/store/chain/instance-chain";
import { latestInstanceCheckpoint, maybeInstanceCheckpoint } from "@/lib/store/chain/instance-checkpoints";
import { formatCheckpoint } from "@/lib/domain/checkpoint";

export const metadata: Metadata = { title: "Security log" };

const SHOWN = 50;

export default async function SecurityLogPage() {
  await requirePage("instance:audit", "/settings/security");
  // Looking at the trail is a good moment to sign one if it is due.
  await maybeInstanceCheckpoint(true);
  const [head, events, checkpoint] = await Promise.all([instanceChainHead(), latestInstanceEvents(SHOWN), latestInstanceCheckpoint()]);
  const now = renderedAt();
  return (
    <div className="space-y-8">
      <div>
        <h1 className="text-2xl font-semibold">Security log</h1>
        <p className="mt-1 max-w-3xl text-slate-700 dark:text-slate-300">
          What happened to this server&apos;s people and projects: sign-ins and refusals, users, API tokens, projects and their
          members. It is a hash chain of its own, apart from every project&apos;s audit trail (a project&apos;s trail holds what was
          done in that project), so each can be handed to its auditor alone. Nothing in it is ever changed or deleted.
        </p>
      </div>
      <section aria-labelledby="trail-status" className="space-y-3 rounded-xl border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="trail-status" className="font-semibold">
          The trail
        </h2>
        <dl className="grid grid-cols-[minmax(8rem,auto)_1fr] gap-x-4 gap-y-1 text-sm">
          <dt className="text-slate-600 dark:text-slate-400">records</dt>
          <dd className="tabular-nums" data-testid="trail-records">
            {head ? `${head.records.toLocaleString("en")} (head ${head.hash.slice(0, 16)}…)` : "none yet"}
          </dd>
          <dt className="text-slate-600 dark:text-slate-400">last recorded</dt>
          <dd>{head ? <When at={head.at} now={now} /> : "—"}</dd>
          <dt className="text-slate-600 dark:text-slate-400">last checkpoint</dt>
          <dd data-testid="trail-checkpoint">
            {checkpoint ? (
              <>
                <When at={checkpoint.time} now={now} />, covering {checkpoint.size.toLocaleString("en")} records (signed with the key the Audit page shows)
              </>
            ) : (
              "none yet"
            )}
          </dd>
        </dl>
        {checkpoint ? (
          <details className="text-sm">
            <summary className="cursor-pointer text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">the latest checkpoint, to keep somewhere else</summary>
            <pre className="mt-2 overflow-auto rounded-md bg-slate-100 p-3 font-mono text-xs dark:bg-slate-900">{formatCheckpoint(checkpoint)}</pre>
          </details>
        ) : null}
        <div className="flex flex-wrap items-start gap-3">
          <a
            href="/api/v1/security-events"
            download
            className="inline-flex items-center rounded-md border border-slate-300 px-3 py-2 text-sm font-medium hover:bg-slate-50 focus-visible:outline focus-visible:outline-2 focus-visible:outline-indigo-600 dark:border-slate-700 dark:hover:bg-slate-900"
          >
            Download the trail (NDJSON)
          </a>
          <VerifyButton trail="instance" />
        </div>
        <p className="text-sm text-slate-600 dark:text-slate-400">
          Check a downloaded trail anywhere with <code className="font-mono">npm run cli -- audit:verify --file TRAIL.ndjson</code>; on the
          server, <code className="font-mono">npm run cli -- audit:verify --instance</code>. Every download is itself recorded here.
        </p>
      </section>
      <section aria-labelledby="latest" className="space-y-3">
        <h2 id="latest" className="font-semibold">
          {events.length === 1 ? "The latest event" : events.length ? `The latest ${events.length} events` : "Events"}
        </h2>
        {events.length ? (
          <TableScroll>
            <table className="w-full text-left text-sm">
              <caption className="sr-only">The latest security events, newest first</caption>
              <thead>
                <tr className="text-slate-600 dark:text-slate-400">
                  <th className="py-2 pr-4 font-medium">When</th>
                  <th className="py-2 pr-4 font-medium">Event</th>
                  <th className="py-2 pr-4 font-medium">About</th>
                  <th className="py-2 pr-4 font-medium">By</th>
                  <th className="py-2 font-medium">From</th>
                </tr>
              </thead>
              <tbody>
                {events.map((e) => {
                  const event = e.payload as SecurityEvent;
                  return (
                    <tr key={e.seq} className="border-t border-slate-200 align-top dark:border-slate-800">
                      <td className="whitespace-nowrap py-2 pr-4">
                        <When at={e.recorded_at} now={now} />
                      </td>
                      <td className="whitespace-nowrap py-2 pr-4 font-mono text-xs">{event.type}</td>
                      <td className="min-w-[16rem] break-words py-2 pr-4">{eventSummary(event)}</td>
                      <td className="whitespace-nowrap py-2 pr-4">{e.actor ?? "—"}</td>
                      <td className="whitespace-nowrap py-2 font-mono text-xs">{event.source ?? "—"}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </TableScroll>
        ) : (
          <p className="text-sm text-slate-600 dark:text-slate-400">Nothing yet: the first sign-in or change of a user, token or project is recorded here.</p>
        )}
      </section>
    </div>
  );
}
