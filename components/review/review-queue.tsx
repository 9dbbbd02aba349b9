"use client";

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
import { OperationLead } from "@/components/operations/lead";

export type QueueRow = {
  operation_id: string;
  tool: string | null;
  /** What the row leads with: tool · target · key argument (lib/domain/headline.ts); null: the id. */
  headline: string | null;
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

/** On a phone (below `sm`) the table's rows are cards: one column, no sideways scroll. */
const card = (reviewer: boolean) => ({
  table: "w-full text-left text-sm max-sm:block",
  body: "max-sm:block",
  row: `max-sm:grid ${reviewer ? "max-sm:grid-cols-[auto_minmax(0,1fr)]" : "max-sm:grid-cols-1"} max-sm:gap-x-3 max-sm:gap-y-1.5 max-sm:py-3`,
  cell: reviewer ? "max-sm:col-start-2 max-sm:p-0" : "max-sm:p-0",
});

/**
 * The review queue's table: j/k to move between items, Enter to open one, c to claim, s to
 * select; for reviewers, checkboxes and a bar that resolves the selected as not applied, or
 * retracts them, with one reason (each still its own correction; each result is listed). The bar
 * stays at the bottom of the screen while anything is selected.
 */
export function ReviewQueue({ rows, me, reviewer, admin, now, ageHours, order = "oldest" }: { rows: QueueRow[]; me: string; reviewer: boolean; admin: boolean; now: number; ageHours: number; order?: "oldest" | "newest" }) {
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
  const c = card(reviewer);
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
        <table ref={table} className={c.table}>
          <caption className="sr-only">Operations that need review, {order === "newest" ? "newest" : "oldest"} call first</caption>
          <thead className="max-sm:block">
            <tr className="text-slate-600 max-sm:flex max-sm:items-center max-sm:gap-2 dark:text-slate-400">
              {reviewer ? (
                <th className="py-2 pr-2 font-medium">
                  <label className="inline-flex items-center gap-2">
                    <input
                      type="checkbox"
                      aria-label="Select all on this page"
                      checked={allOnPage}
                      onChange={(e) => setSelected(e.target.checked ? new Set(rows.map((r) => r.operation_id)) : new Set())}
                      className={`size-4 ${focusRing}`}
                    />
                    <span aria-hidden className="text-xs font-normal sm:hidden">
                      select all
                    </span>
                  </label>
                </th>
              ) : null}
              <th className="py-2 pr-3 font-medium max-sm:sr-only">Operation</th>
              <th className="py-2 pr-3 font-medium max-sm:sr-only">Outcome</th>
              <th className="py-2 pr-3 font-medium max-sm:sr-only">Why</th>
              <th className="py-2 pr-3 font-medium max-sm:sr-only" title="What the agent told its user">
                Agent claimed
              </th>
              <th className="py-2 pr-3 font-medium max-sm:sr-only">Age</th>
              <th className="py-2 font-medium max-sm:sr-only">Who holds it</th>
            </tr>
          </thead>
          <tbody className={c.body}>
            {rows.map((op, i) => {
              const old = olderThan(op.called_at, ageHours, now);
              return (
                <tr key={op.operation_id} aria-current={i === current ? "true" : undefined} className={`border-t border-slate-200 align-top dark:border-slate-800 ${c.row} ${i === current ? "bg-indigo-50 dark:bg-indigo-950/40" : ""}`}>
                  {reviewer ? (
                    <td className="py-2 pr-2 max-sm:row-span-5 max-sm:p-0 max-sm:pt-0.5">
                      <input type="checkbox" aria-label={`Select ${op.operation_id}`} checked={selected.has(op.operation_id)} onChange={(e) => toggle(op.operation_id, e.target.checked)} className={`size-4 ${focusRing}`} />
                    </td>
                  ) : null}
                  <td className={`py-2 pr-3 sm:max-w-72 ${c.cell}`}>
                    <OperationLead id={op.operation_id} headline={op.headline} onFocus={() => setCurrent(i)} />
                  </td>
                  <td className={`py-2 pr-3 ${c.cell}`}>
                    <span className="flex flex-wrap items-center gap-x-2 gap-y-1">
                      <OutcomeBadge outcome={op.effective_outcome} />
                      {op.audit_sample ? <span className="text-xs font-medium text-indigo-800 dark:text-indigo-300">audit sample</span> : null}
                    </span>
                  </td>
                  {/* A floor for the reason beside the other columns; on a phone, the card's width. */}
                  <td className={`py-2 pr-3 sm:min-w-48 ${c.cell}`}>{op.reason}</td>
                  <td className={`py-2 pr-3 max-sm:hidden ${op.overclaimed ? "" : "text-slate-600 dark:text-slate-400"}`}>{op.overclaimed ? "success" : "—"}</td>
                  <td className={`py-2 pr-3 text-xs tabular-nums sm:whitespace-nowrap ${c.cell}`}>
                    <span className={`block max-sm:inline ${old ? "text-amber-800 dark:text-amber-300" : ""}`}>
                      called <When at={op.called_at} now={now} className="font-medium" />
                      {old ? <span className="sr-only"> (over {ageHours} h old)</span> : null}
                      {old ? (
                        <span aria-hidden title={`Called over ${ageHours} h ago`} className="ml-1">
                          ●
                        </span>
                      ) : null}
                    </span>
                    <span className="max-sm:hidden"> </span>
                    <span className="block text-slate-600 max-sm:ml-2 max-sm:inline dark:text-slate-400">
                      recorded <When at={op.created_at} now={now} />
                    </span>
                  </td>
                  <td className={`py-2 ${c.cell}`}>
                    <div className="flex flex-wrap items-center gap-2">
                      <span className="text-xs">
                        <span className="sm:hidden">held by </span>
                        {op.holder ? (op.holder === me ? "you" : op.holder) : "nobody"}
                      </span>
                      {reviewer ? <ClaimControls id={op.operation_id} holder={op.holder} me={me} admin={admin} /> : null}
                    </div>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableScroll>
      {reviewer ? (
        <form
          ref={bulkForm}
          action={submit}
          aria-labelledby="bulk-title"
          className={`space-y-2 rounded-xl border border-indigo-200 bg-indigo-50 p-3 sm:p-4 dark:border-indigo-900 dark:bg-indigo-950 ${chosen.length ? "sticky bottom-2 z-20 shadow-lg ring-1 ring-indigo-300 dark:ring-indigo-800" : ""}`}
        >
          <div className="flex flex-wrap items-center justify-between gap-2">
            <h2 id="bulk-title" className="font-semibold">
              Triage the selected ({chosen.length})
            </h2>
            {chosen.length ? (
              <button type="button" onClick={() => setSelected(new Set())} className={`rounded-sm text-sm text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300 ${focusRing}`}>
                Clear selection
              </button>
            ) : (
              <p className="text-xs text-slate-600 dark:text-slate-400">Select rows (or press s on one): this bar follows you down the page.</p>
            )}
          </div>
          {chosen.map((r) => (
            <span key={r.operation_id} hidden>
              <input type="hidden" name="id" value={r.operation_id} />
              <input type="hidden" name="follows" value={r.last_correction_id ?? ""} />
            </span>
          ))}
          <fieldset>
            <legend className="sr-only">Do</legend>
            <div className="flex flex-wrap gap-x-4 gap-y-1 text-sm">
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
          <div className="flex flex-wrap items-end gap-2">
            <div className="min-w-0 flex-1 basis-64 space-y-1">
              <label htmlFor="bulk-reason" className="block text-sm font-medium">
                Reason (one for all)
              </label>
              <textarea
                id="bulk-reason"
                name="reason"
                required
                maxLength={MAX_REASON_LENGTH}
                rows={chosen.length ? 1 : 2}
                value={reason}
                onChange={(e) => setReason(e.target.value)}
                aria-describedby="bulk-help"
                className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 text-sm focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-500/30 dark:border-slate-700 dark:bg-slate-900"
              />
            </div>
            <Button type="submit" className={focusRing} disabled={pending || !chosen.length || chosen.length > BULK_LIMIT || !action || !reason.trim()}>
              {action === "retract" ? "Retract" : "Resolve"} {chosen.length} selected
            </Button>
          </div>
          <p id="bulk-help" className={`text-xs text-slate-600 dark:text-slate-400 ${chosen.length ? "max-sm:hidden" : ""}`}>
            Each gets its own correction with this reason, checked against its latest correction and its claim; one someone else changed or holds is reported and left as it is. At most {BULK_LIMIT} at a time.
          </p>
          {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
          {state?.results ? (
            <div role="status" aria-labelledby="bulk-results" className="max-h-48 overflow-y-auto text-sm">
              <h3 id="bulk-results" className="font-medium">
                {state.results.filter((r) => r.ok).length} of {state.results.length} done
                {state.results.some((r) => !r.ok) ? `; ${state.results.filter((r) => !r.ok).length} left as they were` : ""}
              </h3>
              <ul className="mt-1 space-y-1">
                {state.results.map((r) => (
                  <li key={r.id} className={r.ok ? "text-emerald-900 dark:text-emerald-200" : "text-rose-900 dark:text-rose-200"}>
                    <span className="break-all font-mono">{r.id}</span>: {r.ok ? `done, now ${r.effective_outcome.replace("_", " ")}` : `not done (${r.code}) — ${r.message}`}
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
