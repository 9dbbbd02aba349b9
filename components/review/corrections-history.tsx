import { displayUtc } from "@/lib/domain/time";
import type { OperationComment, OperationCorrectionView, OperationDetail } from "@/lib/views/operation-detail";
import { OutcomeBadge } from "@/components/operations/badges";
import { NoteForm } from "./note-form";

const when = displayUtc;

/**
 * Every correction and note, oldest first, in the order they were recorded: who, when, from →
 * to, why, on what evidence; and what reviewers wrote for each other. `canNote`: the form to add one.
 */
export function CorrectionsHistory({ op, canNote = false }: { op: OperationDetail; canNote?: boolean }) {
  // The effective outcome each correction left, as the verdict history derived it (it holds every
  // correction; a reopen returns to the outcome before the resolve it undoes, which the
  // correction itself does not name).
  const after = new Map(op.verdict_history.filter((v) => v.kind === "correction").map((v) => [v.seq, v.effective_outcome]));
  const entries = [...op.corrections.map((c) => ({ seq: c.seq, c, n: null })), ...op.comments.map((n) => ({ seq: n.seq, c: null, n }))].sort((a, b) => a.seq - b.seq);
  return (
    <section aria-labelledby="corrections" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
      <h2 id="corrections" className="font-semibold">
        Corrections and notes
      </h2>
      {op.corrections.length === 0 ? (
        <p className="mt-1 text-sm text-slate-700 dark:text-slate-300">No corrections. The effective outcome is the classification: {op.effective_outcome}.</p>
      ) : (
        <p className="mt-1 text-sm text-slate-700 dark:text-slate-300">
          Classified as <OutcomeBadge outcome={op.outcome} />; after {op.corrections.length} correction{op.corrections.length === 1 ? "" : "s"} the effective outcome is{" "}
          <OutcomeBadge outcome={op.effective_outcome} />.{op.claim_withdrawn ? " The agent's success claim was withdrawn." : ""}
        </p>
      )}
      {entries.length ? (
        <ol className="mt-3 space-y-2">
          {entries.map((e) => (e.n ? <NoteItem key={e.n.id} n={e.n} /> : <CorrectionItem key={e.c!.id} c={e.c!} after={after.get(e.c!.seq) ?? null} />))}
        </ol>
      ) : null}
      {canNote ? <NoteForm operationId={op.operation_id} /> : null}
    </section>
  );
}

function CorrectionItem({ c, after }: { c: OperationCorrectionView; after: string | null }) {
  return (
    <li className="rounded-lg border border-slate-200 p-3 text-sm dark:border-slate-800">
      <p className="flex flex-wrap items-center gap-2">
        <strong className="capitalize">{c.action}</strong>
        <OutcomeBadge outcome={c.outcome_seen} /> → <OutcomeBadge outcome={after} />
        {c.withdraw_claim || c.action === "retract" ? <span className="text-xs font-medium text-rose-800 dark:text-rose-300">success claim withdrawn</span> : null}
        <span className="text-slate-600 dark:text-slate-400">
          by {c.reviewer} · {when(c.recorded_at)}
        </span>
      </p>
      <p className="mt-1 whitespace-pre-wrap break-words">{c.reason}</p>
      {c.evidence ? (
        <p className="mt-1 font-mono text-xs break-all text-slate-700 dark:text-slate-300">
          {Object.entries(c.evidence)
            .map(([k, v]) => `${k}: ${v}`)
            .join(" · ")}
        </p>
      ) : null}
    </li>
  );
}

function NoteItem({ n }: { n: OperationComment }) {
  return (
    <li className="rounded-lg border border-dashed border-slate-300 bg-slate-50 p-3 text-sm dark:border-slate-700 dark:bg-slate-900/50">
      <p className="flex flex-wrap items-center gap-2">
        <strong>Note</strong>
        <span className="text-slate-600 dark:text-slate-400">
          by {n.author ?? "a reviewer"} · {when(n.recorded_at)}
        </span>
      </p>
      <p className="mt-1 whitespace-pre-wrap break-words">{n.text}</p>
    </li>
  );
}
