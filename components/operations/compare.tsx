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
      <table className="mt-2 w-full table-fixed text-left text-sm">
        <thead>
          <tr className="text-slate-700 dark:text-slate-300">
            <th scope="col" className="w-28 py-1 pr-2 font-medium">
              <span className="sr-only">what</span>
            </th>
            <th scope="col" className="py-1 pr-2 font-medium">Intended</th>
            <th scope="col" className="py-1 font-medium">Canonical read found</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const differs = r.compared !== false && r.intended !== null && r.found !== null && r.intended !== r.found;
            return (
              <tr key={r.what} className="border-t border-rose-200 align-top dark:border-rose-900">
                <th scope="row" className="py-1 pr-2 font-normal text-slate-700 dark:text-slate-300">
                  {r.what}
                  {differs ? <span className="block text-xs font-semibold text-rose-800 dark:text-rose-300">differs</span> : null}
                </th>
                <td className="break-all py-1 pr-2 font-mono text-xs">{r.intended !== null ? <LongText value={r.intended} max={200} /> : "—"}</td>
                <td className="break-all py-1 font-mono text-xs">{r.found !== null ? <LongText value={r.found} max={200} /> : "—"}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
