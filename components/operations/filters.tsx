import Link from "next/link";
import { EFFECTIVE_OUTCOMES, FAILURE_CATEGORIES, OUTCOMES } from "@/lib/domain/outcomes";

type Values = Record<string, string | undefined>;

const label = "block text-xs font-medium text-slate-700 dark:text-slate-300";
const control = "mt-1 block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm dark:border-slate-700 dark:bg-slate-900";

/**
 * The list's filters as a plain GET form: the URL is the state, so a filtered list can be
 * shared, reloaded and navigated with back/forward, and it works before any script runs.
 */
export function OperationFilters({ values, tools }: { values: Values; tools: string[] }) {
  const select = (name: string, title: string, options: [string, string][]) => (
    <div>
      <label htmlFor={`f-${name}`} className={label}>
        {title}
      </label>
      <select id={`f-${name}`} name={name} defaultValue={values[name] ?? ""} className={control}>
        <option value="">any</option>
        {options.map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
      </select>
    </div>
  );
  const text = (name: string, title: string, placeholder?: string, type = "text") => (
    <div>
      <label htmlFor={`f-${name}`} className={label}>
        {title}
      </label>
      <input id={`f-${name}`} name={name} type={type} defaultValue={values[name] ?? ""} placeholder={placeholder} className={control} />
    </div>
  );
  return (
    // autoComplete off: otherwise the browser restores the fields as they were typed when Back
    // returns to a list the URL says is unfiltered.
    <form method="get" action="/operations" autoComplete="off" aria-label="Filter operations" className="space-y-3 rounded-xl border border-slate-200 p-4 dark:border-slate-800">
      <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-4">
        {text("q", "Search", "an operation, receipt or evidence id, or how it starts", "search")}
        {select("outcome", "Effective outcome", EFFECTIVE_OUTCOMES.map((o) => [o, o.replace("_", " ")]))}
        {select("classified_as", "Classified as", OUTCOMES.map((o) => [o, o]))}
        {select("needs_review", "Needs review", [["true", "yes"], ["false", "no"]])}
        {select("silent_failure", "Silent failure", [["true", "yes: accepted, effect absent or different"]])}
        {select("overclaimed", "Claimed success, not verified", [["true", "yes"], ["false", "no"]])}
        {select("tool", "Tool", tools.map((t) => [t, t]))}
        {select("failure_category", "Failure category", Object.entries(FAILURE_CATEGORIES).map(([k, v]) => [k, `${k} · ${v}`]))}
        {text("target", "Target")}
        {text("agent", "Agent")}
        {text("trajectory_id", "Trajectory")}
        {text("since", "Recorded since", "2026-08-28T00:00:00Z")}
        {text("until", "Recorded before", "2026-09-01T00:00:00Z")}
      </div>
      <div className="flex gap-3">
        <button type="submit" className="rounded-md bg-indigo-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-700">
          Apply filters
        </button>
        <Link href="/operations" className="rounded-md px-3 py-1.5 text-sm text-slate-700 underline-offset-2 hover:underline dark:text-slate-300">
          Clear
        </Link>
      </div>
    </form>
  );
}
