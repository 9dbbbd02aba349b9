import { ProjectForm } from "@/components/shell/project-form";
import Link from "@/components/shell/link";
import { EFFECTIVE_OUTCOMES, FAILURE_CATEGORIES, OUTCOMES } from "@/lib/domain/outcomes";

type Values = Record<string, string | undefined>;

const label = "block text-xs font-medium text-slate-700 dark:text-slate-300";
const control = "mt-1 block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm dark:border-slate-700 dark:bg-slate-900";

/** The filters people use most: always in view, in one row on a wide screen. */
export const PRIMARY_FILTERS = ["q", "outcome", "tool", "needs_review"] as const;
/** The rest, behind "More filters" (open by itself when one of them is set). */
export const MORE_FILTERS = ["classified_as", "silent_failure", "overclaimed", "failure_category", "target", "agent", "trajectory_id", "since", "until"] as const;

/** List parameters the form has no field for. */
const HIDDEN_PARAMS = ["receipt_status", "called_since", "called_until", "order", "newer_than", "limit", "metric", "part", "audit_sample"] as const;

/** What a chip calls each filter (list parameters the form has no field for are named too). */
const CHIP_NAMES: Record<string, string> = {
  q: "Search",
  outcome: "Outcome",
  tool: "Tool",
  needs_review: "Needs review",
  classified_as: "Classified as",
  silent_failure: "Silent failure",
  overclaimed: "Claimed success, false or unconfirmed",
  failure_category: "Failure category",
  target: "Target",
  agent: "Agent",
  trajectory_id: "Trajectory",
  since: "Recorded since",
  until: "Recorded before",
  receipt_status: "Receipt",
  called_since: "Called since",
  called_until: "Called before",
  order: "Order",
  newer_than: "Newer than",
  // One chip for a metric's part (from /metrics): removing it removes both.
  metric: "Metric",
  audit_sample: "Audit sample",
};

const yesNo = (v: string) => (v === "true" ? "yes" : v === "false" ? "no" : v);
const chipValue = (key: string, v: string, values: Values = {}) =>
  key === "needs_review" || key === "silent_failure" || key === "overclaimed" || key === "audit_sample"
    ? yesNo(v)
    : key === "outcome"
      ? v.replace("_", " ")
      : key === "metric"
        ? `${v.replaceAll("_", " ")} (${values.part ?? "?"})`
        : v;

/**
 * The list's filters as a plain GET form: the URL is the state, so a filtered list can be
 * shared, reloaded and navigated with back/forward, and it works before any script runs.
 * Empty fields are dropped from the URL by the page (it redirects to the URL without them).
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
  const text = (name: string, title: string, placeholder?: string, type = "text", maxLength = 200) => (
    <div>
      <label htmlFor={`f-${name}`} className={label}>
        {title}
      </label>
      <input id={`f-${name}`} name={name} type={type} defaultValue={values[name] ?? ""} placeholder={placeholder} maxLength={maxLength} className={control} />
    </div>
  );
  const moreActive = MORE_FILTERS.some((k) => values[k]);
  // A tool filtered on that the list of known tools lacks stays selectable (and so survives Apply).
  const toolOptions = values.tool && !tools.includes(values.tool) ? [values.tool, ...tools] : tools;
  return (
    // autoComplete off: otherwise the browser restores the fields as they were typed when Back
    // returns to a list the URL says is unfiltered.
    <ProjectForm method="get" action="/operations" autoComplete="off" aria-label="Filter operations" className="space-y-3 rounded-xl border border-slate-200 p-4 dark:border-slate-800">
      <div className="grid grid-cols-2 items-end gap-3 lg:grid-cols-[2fr_1fr_1fr_1fr_auto]">
        <div className="col-span-2 lg:col-span-1">{text("q", "Search", "words or an id: refund, order 5531, op-…", "search")}</div>
        {select("outcome", "Effective outcome", EFFECTIVE_OUTCOMES.map((o) => [o, o.replace("_", " ")]))}
        {select("tool", "Tool", toolOptions.map((t) => [t, t]))}
        {select("needs_review", "Needs review", [["true", "yes"], ["false", "no"]])}
        <div className="flex gap-3">
          <button type="submit" className="rounded-md bg-indigo-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-700">
            Apply filters
          </button>
          <Link href="/operations" className="rounded-md px-3 py-1.5 text-sm text-slate-700 underline-offset-2 hover:underline dark:text-slate-300">
            Clear
          </Link>
        </div>
      </div>
      <details open={moreActive} className="group">
        <summary className="cursor-pointer text-sm font-medium text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">More filters</summary>
        <div className="mt-3 grid gap-3 sm:grid-cols-2 lg:grid-cols-4">
          {select("classified_as", "Classified as", OUTCOMES.map((o) => [o, o]))}
          {select("silent_failure", "Silent failure", [["true", "yes: accepted, effect did not hold"]])}
          {select("overclaimed", "Claimed success, false or unconfirmed", [["true", "yes"], ["false", "no"]])}
          {select("failure_category", "Failure category", Object.entries(FAILURE_CATEGORIES).map(([k, v]) => [k, `${k} · ${v}`]))}
          {text("target", "Target")}
          {text("agent", "Agent")}
          {text("trajectory_id", "Trajectory")}
          {text("since", "Recorded since", "2026-08-28 or 2026-08-28T09:30:00Z")}
          {text("until", "Recorded before", "2026-09-01 or 2026-09-01T00:00:00Z")}
        </div>
      </details>
      {/* Parameters without a field (the overview's links use some) ride along, so Apply keeps them. */}
      {HIDDEN_PARAMS.map((k) => (values[k] ? <input key={k} type="hidden" name={k} value={values[k]} /> : null))}
    </ProjectForm>
  );
}

/**
 * The active filters as chips: each one a link to the same list without that filter (and back
 * on its first page, since a cursor belongs to the list it came from).
 */
export function ActiveFilterChips({ values }: { values: Values }) {
  const active = Object.entries(values).filter((e): e is [string, string] => e[0] in CHIP_NAMES && !!e[1]);
  if (!active.length) return null;
  const without = (key: string) => {
    const gone = key === "metric" ? ["metric", "part"] : [key];
    const rest = new URLSearchParams(Object.entries(values).filter((e): e is [string, string] => !gone.includes(e[0]) && e[0] !== "cursor" && !!e[1]));
    return rest.size ? `/operations?${rest}` : "/operations";
  };
  return (
    <ul aria-label="Active filters" className="flex flex-wrap gap-2">
      {active.map(([key, v]) => (
        <li key={key} className="max-w-full min-w-0">
          <Link
            href={without(key)}
            className="inline-flex max-w-full items-center gap-1 rounded-full border border-indigo-300 bg-indigo-50 px-3 py-1 text-sm text-indigo-950 hover:bg-indigo-100 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600 dark:border-indigo-800 dark:bg-indigo-950 dark:text-indigo-100"
          >
            <span className="min-w-0 truncate">
              <span className="sr-only">Remove filter </span>
              {CHIP_NAMES[key]}: <span className="font-medium">{chipValue(key, v, values)}</span>
            </span>
            <span aria-hidden="true" className="shrink-0">
              ×
            </span>
          </Link>
        </li>
      ))}
    </ul>
  );
}
