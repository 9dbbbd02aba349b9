import { lineDiff, textChanges } from "@/lib/domain/line-diff";

/**
 * A call's arguments as a reviewer reads them (issue 50): each key with its value, a text as
 * text with its line breaks (a long one folded behind its first line), anything else as compact
 * JSON; and, where the arguments carry an old and a new text (edit_file's edits, old/new pairs),
 * a line diff of the two. Bounded: at most SHOWN_KEYS keys, TEXT_MAX characters of a text,
 * JSON_MAX of anything else, DIFF_LINES lines of a diff; what is cut says so.
 */
export const SHOWN_KEYS = 30;
const TEXT_MAX = 20_000;
const JSON_MAX = 400;
/** A text longer than this, or with more lines, is folded. */
const FOLD_CHARS = 600;
const FOLD_LINES = 12;
const DIFF_LINES = 400;
/** A one-line text this short sits on its key's line. */
const INLINE_CHARS = 120;

const plural = (n: number, one: string) => `${n.toLocaleString("en")} ${one}${n === 1 ? "" : "s"}`;

/** Whether a value is shown in full below (false: cut, as `valueCut` says). */
export function valueCut(v: unknown): boolean {
  if (typeof v === "string") return v.length > TEXT_MAX;
  return (JSON.stringify(v) ?? "").length > JSON_MAX;
}

function TextValue({ text }: { text: string }) {
  const shown = text.length > TEXT_MAX ? text.slice(0, TEXT_MAX) : text;
  const lines = text.split("\n").length;
  if (text.length <= INLINE_CHARS && lines === 1) return <span className="break-words">{text}</span>;
  const body = (
    // No scroll box of its own: it wraps, and a long text is folded (below) until asked for.
    <pre className="mt-1 whitespace-pre-wrap break-words rounded-md bg-slate-50 p-2 font-mono text-xs text-slate-900 dark:bg-slate-900 dark:text-slate-100">
      {shown}
      {shown.length < text.length ? `\n… ${plural(text.length - shown.length, "more character")} (the whole call is in the raw JSON)` : ""}
    </pre>
  );
  if (text.length <= FOLD_CHARS && lines <= FOLD_LINES) return body;
  const first = text.split("\n", 1)[0].slice(0, 80);
  return (
    <details>
      <summary className="cursor-pointer break-words text-indigo-700 dark:text-indigo-300">
        <span className="text-slate-900 dark:text-slate-100">{first}</span>
        {first.length < text.length ? "…" : ""} <span className="text-xs">({plural(lines, "line")}, {plural(text.length, "character")})</span>
      </summary>
      {body}
    </details>
  );
}

function JsonValue({ value }: { value: unknown }) {
  const text = JSON.stringify(value) ?? String(value);
  return <span className="break-all font-mono text-xs">{text.length > JSON_MAX ? `${text.slice(0, JSON_MAX)}… (${text.length.toLocaleString("en")} characters)` : text}</span>;
}

/** A line diff of an old and a new text, removed lines then added, the rest kept. */
export function TextDiff({ label, before, after }: { label: string; before: string; after: string }) {
  const diff = lineDiff(before.slice(0, TEXT_MAX), after.slice(0, TEXT_MAX));
  const removed = diff.filter((l) => l.kind === "removed").length;
  const added = diff.filter((l) => l.kind === "added").length;
  return (
    <figure className="text-sm">
      <figcaption className="text-slate-700 dark:text-slate-300">
        {label}: <span className="text-rose-800 dark:text-rose-300">−{removed}</span> <span className="text-emerald-800 dark:text-emerald-300">+{added}</span> lines
      </figcaption>
      {/* Focusable: a long diff scrolls in its box, and a keyboard reaches it (axe: scrollable-region-focusable). */}
      <pre tabIndex={0} className="mt-1 max-h-96 overflow-auto rounded-md border border-slate-200 font-mono text-xs focus-visible:outline-2 focus-visible:outline-indigo-600 dark:border-slate-800">
        {diff.slice(0, DIFF_LINES).map((l, i) => (
          <span
            key={i}
            className={`block whitespace-pre-wrap break-words px-2 ${l.kind === "removed" ? "bg-rose-50 text-rose-950 dark:bg-rose-950 dark:text-rose-100" : l.kind === "added" ? "bg-emerald-50 text-emerald-950 dark:bg-emerald-950 dark:text-emerald-100" : "text-slate-700 dark:text-slate-300"}`}
          >
            <span aria-hidden className="select-none">{l.kind === "removed" ? "− " : l.kind === "added" ? "+ " : "  "}</span>
            <span className="sr-only">{l.kind === "removed" ? "removed: " : l.kind === "added" ? "added: " : ""}</span>
            {l.text || " "}
          </span>
        ))}
        {diff.length > DIFF_LINES ? <span className="block px-2 text-slate-600 dark:text-slate-400">… {plural(diff.length - DIFF_LINES, "more line")}</span> : null}
      </pre>
    </figure>
  );
}

/**
 * The arguments list. `marked`: keys to mark (an approval rule looks at them), said to assistive
 * technology too. Returns null for no arguments object.
 */
export function ArgumentList({ params, marked = new Set<string>() }: { params: Record<string, unknown>; marked?: Set<string> }) {
  const entries: [string, unknown][] = [];
  let total = 0;
  for (const k in params) {
    if (!Object.hasOwn(params, k)) continue;
    if (entries.length < SHOWN_KEYS) entries.push([k, params[k]]);
    total++;
  }
  const changes = textChanges(params);
  // Diffs of a list argument (edits[0], …) show in its place; a top-level old/new pair's after the list.
  const inPlace = (k: string) => changes.filter((c) => c.label.startsWith(`${k}[`));
  const shown = new Set(entries.map(([k]) => k));
  const after = changes.filter((c) => !c.label.includes("[") || !shown.has(c.label.split("[")[0]));
  return (
    <div className="space-y-2">
      <dl className="grid grid-cols-[minmax(5rem,auto)_minmax(0,1fr)] gap-x-3 gap-y-1 text-sm">
        {entries.map(([k, v]) => (
          <div key={k} className={`contents ${marked.has(k) ? "font-semibold" : ""}`}>
            <dt className={`break-words ${marked.has(k) ? "text-amber-800 dark:text-amber-300" : "text-slate-600 dark:text-slate-400"}`}>
              {k}
              {marked.has(k) ? <span className="sr-only"> (the rule looks at this)</span> : null}
            </dt>
            <dd className={`min-w-0 ${marked.has(k) ? "rounded bg-amber-50 px-1 dark:bg-amber-950" : ""}`}>
              {inPlace(k).length ? (
                // A list of edits reads as its diffs, where it stands.
                <div className="space-y-2">
                  {inPlace(k).map((c) => (
                    <TextDiff key={c.label} {...c} />
                  ))}
                  {Array.isArray(v) && v.length > inPlace(k).length ? <JsonValue value={v} /> : null}
                </div>
              ) : typeof v === "string" ? (
                <TextValue text={v} />
              ) : (
                <JsonValue value={v} />
              )}
            </dd>
          </div>
        ))}
      </dl>
      {total > SHOWN_KEYS ? <p className="text-xs text-slate-600 dark:text-slate-400">… {plural(total - SHOWN_KEYS, "more argument")} in the raw JSON.</p> : null}
      {after.map((c) => (
        <TextDiff key={c.label} {...c} />
      ))}
    </div>
  );
}
