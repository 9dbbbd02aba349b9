"use client";

import Link from "@/components/shell/link";
import { useActionState, useRef, useState } from "react";
import { OutcomeBadge } from "@/components/operations/badges";
import { Button, Notice } from "@/components/ui/form";
import { MAX_REASON_LENGTH } from "@/lib/domain/corrections";
import { bulkCorrectAction } from "@/lib/actions/review-bulk";
import { BULK_LIMIT, type BulkState } from "@/lib/actions/review-bulk-types";
import { When } from "@/components/ui/when";
import { olderThan } from "@/lib/domain/time";
import { ClaimControls } from "./claim-button";
import { Shortcuts } from "./shortcuts";
import { TableScroll } from "@/components/ui/table-scroll";

export type QueueRow = {
  operation_id: string;
  tool: string | null;
  effective_outcome: string;
  overclaimed: boolean;
  /** Drawn as an audit sample of verified operations (docs/API.md "Metrics": audit samples): confirm it or retract it. */
  audit_sample?: boolean;
  reason: string;
  created_at: string;
  /** When the call happened, as its receipt says. */
  /** When the call happened (the receipt's clock, else when recorded): the queue's order. */
  called_at: string;
  holder: string | null;
  /** The latest correction, which a correction from here names as the one it follows. */
  last_correction_id: string | null;
};

const focusRing = "focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600";

/**
 * The review queue's table: j/k to move between items, Enter to open one, c to claim, s to
 * select; for reviewers, checkboxes and one form that resolves the selected as not applied, or
 * retracts them, with one reason (each still its own correction; each result is listed).
 */
export function ReviewQueue({ rows, me, reviewer, admin, now, ageHours }: { rows: QueueRow[]; me: string; reviewer: boolean; admin: boolean; now: number; ageHours: number }) {
  const table = useRef<HTMLTableElement>(null);
  const bulkForm = useRef<HTMLFormElement>(null);
  const [current, setCurrent] = useState(-1);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [action, setAction] = useState<"resolve_not_applied" | "retract" | null>(null);
  const [reason, setReason] = useState("");
  const [state, submit, pending] = useActionState<BulkState, FormData>(async (prev, form) => {
    const next = await bulkCorrectAction(prev, form);
    if (next?.results) setSelected(new Set(next.results.filter((r) => !r.ok).map((r) => r.id)));
    return next;
  }, null);

  const row = (i: number) => table.current?.querySelector<HTMLTableRowElement>(`tbody tr:nth-child(${i + 1})`) ?? null;
  function move(by: number) {
    if (!rows.length) return;
    const i = Math.min(rows.length - 1, Math.max(0, current + by));
    setCurrent(i);
    row(i)?.querySelector<HTMLAnchorElement>("a")?.focus();
  }
  function toggle(id: string, on = !selected.has(id)) {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  }
  function startBulk(a: "resolve_not_applied" | "retract") {
    if (!selected.size && current >= 0) toggle(rows[current].operation_id, true);
    setAction(a);
    setTimeout(() => bulkForm.current?.querySelector<HTMLTextAreaElement>("textarea")?.focus(), 0);
  }
  const currentId = current >= 0 ? rows[current]?.operation_id : undefined;
  const chosen = rows.filter((r) => selected.has(r.operation_id));
  const allOnPage = rows.length > 0 && rows.every((r) => selected.has(r.operation_id));

  return (
    <div className="space-y-4">
      <div className="flex justify-end">
        <Shortcuts
          title="Review queue keys"
          keys={[
            { key: "j", label: "Next item", run: () => move(1) },
            { key: "k", label: "Previous item", run: () => move(-1) },
            { key: "Enter", label: "Open the current item", run: () => undefined, available: false },
            { key: "c", label: "Claim (or take over) the current item", available: reviewer && currentId !== undefined, run: () => row(current)?.querySelector<HTMLButtonElement>('button[aria-label^="Claim"], button[aria-label^="Take over"]')?.click() },
            { key: "s", label: "Select or unselect the current item", available: reviewer && currentId !== undefined, run: () => toggle(currentId!) },
            { key: "r", label: "Resolve the selected (or current) as not applied", available: reviewer, run: () => startBulk("resolve_not_applied") },
            { key: "x", label: "Retract the selected (or current)", available: reviewer, run: () => startBulk("retract") },
          ]}
        />
      </div>
      <TableScroll>
        <table ref={table} className="w-full text-left text-sm">
          <caption className="sr-only">Operations that need review, oldest call first</caption>
          <thead>
            <tr className="text-slate-600 dark:text-slate-400">
              {reviewer ? (
                <th className="py-2 pr-2 font-medium">
                  <input
                    type="checkbox"
                    aria-label="Select all on this page"
                    checked={allOnPage}
                    onChange={(e) => setSelected(e.target.checked ? new Set(rows.map((r) => r.operation_id)) : new Set())}
                    className={`size-4 ${focusRing}`}
                  />
                </th>
              ) : null}
              <th className="py-2 pr-3 font-medium">Operation</th>
              <th className="py-2 pr-3 font-medium">Outcome</th>
              <th className="py-2 pr-3 font-medium">Why</th>
              <th className="py-2 pr-3 font-medium">Age</th>
              <th className="py-2 font-medium">Who holds it</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((op, i) => (
              <tr key={op.operation_id} aria-current={i === current ? "true" : undefined} className={`border-t border-slate-200 align-top dark:border-slate-800 ${i === current ? "bg-indigo-50 dark:bg-indigo-950/40" : ""}`}>
                {reviewer ? (
                  <td className="py-2 pr-2">
                    <input type="checkbox" aria-label={`Select ${op.operation_id}`} checked={selected.has(op.operation_id)} onChange={(e) => toggle(op.operation_id, e.target.checked)} className={`size-4 ${focusRing}`} />
                  </td>
                ) : null}
                <td className="py-2 pr-3">
                  <Link href={`/operations/${encodeURIComponent(op.operation_id)}`} onFocus={() => setCurrent(i)} className={`rounded-sm font-mono text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300 ${focusRing}`}>
                    {op.operation_id}
                  </Link>
                  <div className="font-mono text-xs text-slate-600 dark:text-slate-400">{op.tool}</div>
                </td>
                <td className="py-2 pr-3">
                  <OutcomeBadge outcome={op.effective_outcome} />
                  {op.overclaimed ? <div className="mt-1 text-xs font-medium text-rose-800 dark:text-rose-300">claimed success</div> : null}
                  {op.audit_sample ? <div className="mt-1 text-xs font-medium text-indigo-800 dark:text-indigo-300">audit sample</div> : null}
                </td>
                {/* A floor for the reason on a phone: a few lines and a sideways scroll, not a word a line. */}
                <td className="min-w-48 py-2 pr-3">{op.reason}</td>
                <td className="py-2 pr-3 whitespace-nowrap text-xs tabular-nums">
                  <div>
                    called <When at={op.called_at} now={now} className="font-medium" />
                  </div>
                  <div className="text-slate-600 dark:text-slate-400">
                    recorded <When at={op.created_at} now={now} />
                  </div>
                  {olderThan(op.called_at, ageHours, now) ? (
                    <span className="mt-1 inline-block rounded-full border border-amber-400 bg-amber-50 px-2 py-0.5 font-medium text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-200">
                      over {ageHours} h old
                    </span>
                  ) : null}
                </td>
                <td className="py-2">
                  <div className="mb-1 text-xs">{op.holder ? (op.holder === me ? "you" : op.holder) : "nobody"}</div>
                  {reviewer ? <ClaimControls id={op.operation_id} holder={op.holder} me={me} admin={admin} /> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      {reviewer ? (
        <form ref={bulkForm} action={submit} aria-labelledby="bulk-title" className="space-y-3 rounded-xl border border-indigo-200 bg-indigo-50/50 p-4 dark:border-indigo-900 dark:bg-indigo-950/30">
          <h2 id="bulk-title" className="font-semibold">
            Triage the selected ({chosen.length})
          </h2>
          <p className="text-sm text-slate-700 dark:text-slate-300">
            Each selected operation gets its own correction with this reason, checked against its latest correction and its claim; one that someone else changed or holds is reported and left as it is. At most {BULK_LIMIT} at a time.
          </p>
          {chosen.map((r) => (
            <span key={r.operation_id} hidden>
              <input type="hidden" name="id" value={r.operation_id} />
              <input type="hidden" name="follows" value={r.last_correction_id ?? ""} />
            </span>
          ))}
          <fieldset>
            <legend className="text-sm font-medium">Do</legend>
            <div className="mt-1 flex flex-wrap gap-4 text-sm">
              <label className="flex items-center gap-2">
                <input type="radio" name="action" value="resolve_not_applied" required checked={action === "resolve_not_applied"} onChange={() => setAction("resolve_not_applied")} className={focusRing} />
                resolve as not applied — the effect is absent
              </label>
              <label className="flex items-center gap-2">
                <input type="radio" name="action" value="retract" required checked={action === "retract"} onChange={() => setAction("retract")} className={focusRing} />
                retract — withdraw the claimed success
              </label>
            </div>
          </fieldset>
          <div className="space-y-1">
            <label htmlFor="bulk-reason" className="block text-sm font-medium">
              Reason (one for all)
            </label>
            <textarea
              id="bulk-reason"
              name="reason"
              required
              maxLength={MAX_REASON_LENGTH}
              rows={2}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 text-sm focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-500/30 dark:border-slate-700 dark:bg-slate-900"
            />
          </div>
          {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
          <Button type="submit" className={focusRing} disabled={pending || !chosen.length || chosen.length > BULK_LIMIT || !action || !reason.trim()}>
            {action === "retract" ? "Retract" : "Resolve"} {chosen.length} selected
          </Button>
          {state?.results ? (
            <div role="status" aria-labelledby="bulk-results" className="text-sm">
              <h3 id="bulk-results" className="font-medium">
                {state.results.filter((r) => r.ok).length} of {state.results.length} done
                {state.results.some((r) => !r.ok) ? `; ${state.results.filter((r) => !r.ok).length} left as they were` : ""}
              </h3>
              <ul className="mt-1 space-y-1">
                {state.results.map((r) => (
                  <li key={r.id} className={r.ok ? "text-emerald-900 dark:text-emerald-200" : "text-rose-900 dark:text-rose-200"}>
                    <span className="font-mono">{r.id}</span>: {r.ok ? `done, now ${r.effective_outcome.replace("_", " ")}` : `not done (${r.code}) — ${r.message}`}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
        </form>
      ) : null}
    </div>
  );
}
