import { displayUtc } from "@/lib/domain/time";
import type { OperationDetail } from "@/lib/views/operation-detail";
import { OutcomeBadge } from "@/components/operations/badges";

const when = displayUtc;

/** Every correction, oldest first: who, when, from → to, why, on what evidence. */
export function CorrectionsHistory({ op }: { op: OperationDetail }) {
  return (
    <section aria-labelledby="corrections" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
      <h2 id="corrections" className="font-semibold">
        Corrections
      </h2>
      {op.corrections.length === 0 ? (
        <p className="mt-1 text-sm text-slate-700 dark:text-slate-300">No corrections. The effective outcome is the classification: {op.effective_outcome}.</p>
      ) : (
        <>
          <p className="mt-1 text-sm text-slate-700 dark:text-slate-300">
            Classified as <OutcomeBadge outcome={op.outcome} />; after {op.corrections.length} correction{op.corrections.length === 1 ? "" : "s"} the effective outcome is{" "}
            <OutcomeBadge outcome={op.effective_outcome} />.{op.claim_withdrawn ? " The agent's success claim was withdrawn." : ""}
          </p>
          <ol className="mt-3 space-y-2">
            {op.corrections.map((c) => (
              <li key={c.id} className="rounded-lg border border-slate-200 p-3 text-sm dark:border-slate-800">
                <p className="flex flex-wrap items-center gap-2">
                  <strong className="capitalize">{c.action}</strong>
                  <OutcomeBadge outcome={c.outcome_seen} /> →{" "}
                  <OutcomeBadge outcome={c.action === "resolve" ? c.outcome : c.action === "retract" ? "divergent" : null} />
                  <span className="text-slate-600 dark:text-slate-400">
                    by {c.reviewer} · {when(c.recorded_at)}
                  </span>
                </p>
                <p className="mt-1 whitespace-pre-wrap break-words">{c.reason}</p>
                {c.evidence ? (
                  <p className="mt-1 font-mono text-xs break-all text-slate-700 dark:text-slate-300">
                    {Object.entries(c.evidence).map(([k, v]) => `${k}: ${v}`).join(" · ")}
                  </p>
                ) : null}
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
