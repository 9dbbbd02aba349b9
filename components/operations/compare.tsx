import type { ReactNode } from "react";
import { LongText } from "@/components/ui/text";

/** A value the verdict turned on, marked where it appears (not by colour alone: the text says it differs). */
export function Differs({ children, label }: { children: ReactNode; label: string }) {
  return (
    <span className="inline-flex flex-wrap items-baseline gap-x-2">
      <mark className="rounded bg-rose-100 px-1 font-mono text-rose-950 ring-1 ring-inset ring-rose-300 dark:bg-rose-950 dark:text-rose-100 dark:ring-rose-800">{children}</mark>
      <span className="text-xs font-semibold uppercase tracking-wide text-rose-800 dark:text-rose-300">{label}</span>
    </span>
  );
}

/** `compared`: the two values are the same kind of thing, so a difference is marked (a target and an object id are not). */
type Row = { what: string; intended: string | null; found: string | null; compared?: boolean };

/**
 * The intent beside what the deciding read found, row by row; a row whose two values differ
 * is marked. For a mismatch or a differing fingerprint: the reviewer sees what differed, not
 * only that something did.
 */
export function SideBySide({ title, rows }: { title: string; rows: Row[] }) {
  return (
    <div role="group" aria-label={title} className="mt-3 rounded-lg border border-rose-300 bg-rose-50/60 p-3 dark:border-rose-800 dark:bg-rose-950/40">
      <p className="text-sm font-semibold text-rose-900 dark:text-rose-200">{title}</p>
      {/* On a phone each row stacks (what, then intended, then found, each labelled); the
          explicit roles keep it a table for assistive technology whatever the layout. */}
      <table role="table" className="mt-2 w-full text-left text-sm sm:table-fixed">
        <thead className="hidden sm:table-header-group">
          <tr role="row" className="text-slate-700 dark:text-slate-300">
            <th role="columnheader" scope="col" className="w-28 py-1 pr-2 font-medium">
              <span className="sr-only">what</span>
            </th>
            <th role="columnheader" scope="col" className="py-1 pr-2 font-medium">Intended</th>
            <th role="columnheader" scope="col" className="py-1 font-medium">Canonical read found</th>
          </tr>
        </thead>
        <tbody className="block sm:table-row-group">
          {rows.map((r) => {
            const differs = r.compared !== false && r.intended !== null && r.found !== null && r.intended !== r.found;
            return (
              <tr role="row" key={r.what} className="block border-t border-rose-200 py-1 align-top sm:table-row sm:py-0 dark:border-rose-900">
                <th role="rowheader" scope="row" className="block py-1 pr-2 font-normal text-slate-700 sm:table-cell dark:text-slate-300">
                  {r.what}
                  {differs ? <span className="ml-2 text-xs font-semibold text-rose-800 sm:ml-0 sm:block dark:text-rose-300">differs</span> : null}
                </th>
                <td role="cell" className="block break-all py-0.5 pr-2 font-mono text-xs sm:table-cell sm:py-1">
                  <span className="font-sans text-slate-600 sm:hidden dark:text-slate-400">intended: </span>
                  {r.intended !== null ? <LongText value={r.intended} max={200} /> : "—"}
                </td>
                <td role="cell" className="block break-all py-0.5 font-mono text-xs sm:table-cell sm:py-1">
                  <span className="font-sans text-slate-600 sm:hidden dark:text-slate-400">found: </span>
                  {r.found !== null ? <LongText value={r.found} max={200} /> : "—"}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
