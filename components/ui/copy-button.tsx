"use client";

import { useState } from "react";

/**
 * Copies a value (an operation's whole id, which the page shows short) to the clipboard, and
 * says so for a moment. Its name says what it copies; the value is in its title too.
 */
export function CopyButton({ value, what = "id" }: { value: string; what?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      title={`Copy ${value}`}
      aria-label={`Copy the ${what} ${value}`}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(value);
          setCopied(true);
          setTimeout(() => setCopied(false), 1500);
        } catch {
          // No clipboard (an insecure origin): the id is in the title, to select by hand.
        }
      }}
      className="inline-flex shrink-0 items-center rounded align-middle px-1 py-0.5 text-xs text-slate-600 hover:bg-slate-100 hover:text-slate-900 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600 dark:text-slate-400 dark:hover:bg-slate-800 dark:hover:text-white"
    >
      <svg aria-hidden viewBox="0 0 16 16" className="size-3.5" fill="none" stroke="currentColor" strokeWidth="1.5">
        <rect x="5.5" y="5.5" width="8" height="8" rx="1.5" />
        <path d="M10.5 5.5V3.5a1.5 1.5 0 0 0-1.5-1.5H3.5A1.5 1.5 0 0 0 2 3.5V9a1.5 1.5 0 0 0 1.5 1.5h2" />
      </svg>
      <span className={copied ? "ml-1" : "sr-only"} aria-live="polite">
        {copied ? "copied" : ""}
      </span>
    </button>
  );
}
