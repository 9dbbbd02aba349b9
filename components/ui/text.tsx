"use client";

import { useState } from "react";

/**
 * Untrusted text from a receipt: always rendered as text (React escapes it), never as a link
 * or markup; long values are cut with a button to show all.
 */
export function LongText({ value, max = 160 }: { value: string; max?: number }) {
  const [open, setOpen] = useState(false);
  if (value.length <= max) return <span className="break-words">{value}</span>;
  return (
    <span className="break-words">
      {open ? value : `${value.slice(0, max)}…`}{" "}
      <button type="button" onClick={() => setOpen(!open)} className="text-xs font-medium text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">
        {open ? "show less" : `show all ${value.length.toLocaleString()} characters`}
      </button>
    </span>
  );
}

/** Pretty-printed JSON behind one click. */
export function RawJson({ value, label = "raw JSON" }: { value: unknown; label?: string }) {
  return (
    <details className="mt-2 text-sm">
      <summary className="cursor-pointer text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300">{label}</summary>
      <pre className="mt-2 max-h-96 overflow-auto rounded-md bg-slate-100 p-3 font-mono text-xs dark:bg-slate-900">{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}
