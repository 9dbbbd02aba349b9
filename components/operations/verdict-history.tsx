import { displayUtc } from "@/lib/domain/time";
import type { OperationDetail } from "@/lib/views/operation-detail";
import { OutcomeBadge } from "./badges";

type SentBy = OperationDetail["stages"][number]["sent_by"];
type Entry = OperationDetail["verdict_history"][number];

/** Who sent a stage record, in words: "alice@example.com (token ci-agent)", "demo data (system)". */
export function senderText(s: SentBy): string {
  if (s.via === "system") return `${s.name ?? "the system"} (system)`;
  if (s.via === "unrecorded") return s.email ?? s.name ?? "unknown";
  if (s.via === "session") return `${s.email} (signed in)`;
  return `${s.email} (token ${s.token_name ?? s.token_id})`;
}

export function SenderName({ sentBy }: { sentBy: SentBy }) {
  return <span className="font-medium text-slate-800 dark:text-slate-200">{senderText(sentBy)}</span>;
}

const WHAT: Record<string, string> = {
  intent: "intent",
  receipt: "receipt",
  canonical_read: "canonical read",
  side_effects: "side effects",
  resolve: "resolution",
  retract: "retraction of the claim",
  reopen: "reopening",
};

const SHOWN = 50;

function who(e: Entry): string {
  if (e.sent_by) return senderText(e.sent_by);
  return e.reviewer ?? "unknown";
}

/** The verdict after each record, in order; only records that changed it are listed, with who sent them. */
export function VerdictHistory({ op }: { op: OperationDetail }) {
  const changes = op.verdict_history.filter((e, i) => i === 0 || e.changed);
  // A hostile operation can change its verdict a thousand times: show the first and the latest.
  const hidden = Math.max(0, changes.length - SHOWN);
  const steps = hidden ? [changes[0], ...changes.slice(-(SHOWN - 1))] : changes;
  return (
    <section aria-labelledby="verdict-history" className="rounded-xl border border-slate-200 p-4 dark:border-slate-800">
      <h2 id="verdict-history" className="mb-1 font-semibold">
        Verdict history
      </h2>
      <p className="mb-3 text-sm text-slate-700 dark:text-slate-300">
        The outcome after each record that changed it ({op.verdict_history.length} record{op.verdict_history.length === 1 ? "" : "s"} in all).
      </p>
      <ol className="space-y-2 text-sm">
        {steps.map((e) => (
          <li key={e.seq} className="flex flex-wrap items-center gap-x-2 gap-y-1">
            <span className="w-44 shrink-0 text-xs text-slate-600 dark:text-slate-400">{displayUtc(e.recorded_at)}</span>
            <OutcomeBadge outcome={e.effective_outcome} />
            <span>
              after the {WHAT[e.what] ?? e.what} (#{e.seq}) from {who(e)}
            </span>
            {e.changed_by_later_read ? (
              <span className="rounded bg-amber-100 px-1.5 py-0.5 text-xs text-amber-950 dark:bg-amber-900 dark:text-amber-100">changed by a later read</span>
            ) : null}
          </li>
        ))}
      </ol>
      {hidden ? (
        <p className="mt-2 text-xs text-slate-600 dark:text-slate-400">
          {hidden} earlier change{hidden === 1 ? "" : "s"} not shown; the operation&apos;s JSON (<code>verdict_history</code> in the API) has all of them.
        </p>
      ) : null}
    </section>
  );
}
