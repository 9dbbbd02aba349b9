import { displayUtc } from "@/lib/domain/time";
import { EFFECTIVE_OUTCOMES, type EffectiveOutcome } from "@/lib/domain/outcomes";
import type { OperationDetail } from "@/lib/views/operation-detail";
import { OutcomeBadge } from "./badges";

/** What each attempt was, in words. */
const ANSWER: Record<OperationDetail["attempts"][number]["answer"], string> = {
  forwarded: "sent to the tool",
  verdict: "answered with Reconcile's verdict",
  replayed: "a repeat, answered from the record (not sent again)",
  refused: "a repeat, refused (not sent)",
  waiting: "a repeat, waiting on the same approval",
  fate_unknown: "sent, fate unknown",
  not_sent: "not sent",
};

const SHOWN = 50;

/**
 * What the agent was told, and each time it tried again (the MCP gateway's attempt records): the
 * verdict it was answered with, a repeat refused or replayed, a call whose fate is unknown and why.
 */
export function Attempts({ op }: { op: OperationDetail }) {
  if (!op.attempts.length) return null;
  const hidden = Math.max(0, op.attempts.length - SHOWN);
  const shown = hidden ? [op.attempts[0], ...op.attempts.slice(-(SHOWN - 1))] : op.attempts;
  const repeats = op.attempts.filter((a) => a.answer === "replayed" || a.answer === "refused" || a.answer === "waiting").length;
  return (
    <section aria-labelledby="attempts" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800" data-testid="attempts">
      <h2 id="attempts" className="mb-1 font-semibold">
        What the agent was told
      </h2>
      <p className="mb-3 text-sm text-slate-700 dark:text-slate-300">
        As the gateway answered it{repeats ? `; the agent tried again ${repeats} time${repeats === 1 ? "" : "s"}` : ""}.
      </p>
      <ol className="space-y-3 text-sm">
        {shown.map((a, i) => (
          <li key={a.id} className="space-y-1">
            {hidden && i === 1 ? <p className="text-xs text-slate-600 dark:text-slate-400">… {hidden} more attempts, in the export</p> : null}
            <div className="flex flex-wrap items-center gap-x-2 gap-y-1">
              <span className="w-44 shrink-0 text-xs text-slate-600 dark:text-slate-400">{displayUtc(a.at)}</span>
              {a.outcome && (EFFECTIVE_OUTCOMES as readonly string[]).includes(a.outcome) ? <OutcomeBadge outcome={a.outcome as EffectiveOutcome} /> : null}
              <span className="font-medium">{ANSWER[a.answer]}</span>
              {a.client ? (
                <span className="text-xs text-slate-600 dark:text-slate-400">
                  {a.client.name}
                  {a.session ? ` · session ${a.session.slice(0, 12)}` : ""}
                </span>
              ) : null}
            </div>
            <p className="whitespace-pre-wrap break-words rounded bg-slate-50 px-2 py-1 font-mono text-xs text-slate-800 dark:bg-slate-900 dark:text-slate-200">{a.text}</p>
          </li>
        ))}
      </ol>
    </section>
  );
}
