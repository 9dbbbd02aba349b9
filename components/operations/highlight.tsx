import type { SnippetLine, TextPart } from "@/lib/domain/search";

const markStyle = "rounded-sm bg-amber-200 px-0.5 text-slate-950 dark:bg-amber-300 dark:text-slate-950";

/**
 * Text with the words a search matched marked: the parts come from lib/domain/search.ts
 * (highlightParts) and each is rendered as text, so nothing in the data is ever markup.
 */
export function Highlighted({ parts }: { parts: TextPart[] }) {
  return (
    <>
      {parts.map((p, i) =>
        p.mark ? (
          <mark key={i} className={markStyle}>
            {p.text}
          </mark>
        ) : (
          <span key={i}>{p.text}</span>
        ),
      )}
    </>
  );
}

/** Where a search matched an operation: its document's lines, "label: value", the words marked. */
export function MatchLines({ lines }: { lines: SnippetLine[] }) {
  if (!lines.length) return null;
  return (
    <ul aria-label="Where it matched" className="mt-1 max-w-[22rem] space-y-0.5 text-xs text-slate-700 dark:text-slate-300">
      {lines.map((l, i) => (
        <li key={i} className="break-words">
          <span className="text-slate-600 dark:text-slate-400">{l.label}:</span> <Highlighted parts={l.parts} />
        </li>
      ))}
    </ul>
  );
}
