import Link from "@/components/shell/link";
import type { ReactNode } from "react";
import { shortId } from "@/lib/domain/headline";
import { CopyButton } from "@/components/ui/copy-button";

const focusRing = "focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600";

/**
 * A list row's first cell (issue 50): what happened — the headline (tool · target · key
 * argument, lib/domain/headline.ts) — linked to the operation, the id short beneath it (whole
 * in its title) with a copy button. Without a tool the id leads, whole.
 */
export function OperationLead({ id, headline, render = (t) => t, onFocus }: { id: string; headline: string | null; render?: (text: string) => ReactNode; onFocus?: () => void }) {
  const href = `/operations/${encodeURIComponent(id)}`;
  const short = shortId(id);
  // Inline, so that the copy button follows the id on its line, wherever the headline wraps.
  return (
    <div className="min-w-0">
      <Link href={href} onFocus={onFocus} className={`rounded-sm text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300 ${focusRing}`}>
        {headline ? (
          <>
            <span className="break-words font-medium">{render(headline)}</span>
            <br />
            <span className="break-all font-mono text-xs text-slate-600 dark:text-slate-400" title={id}>
              {short === id ? render(id) : short}
            </span>
          </>
        ) : (
          <span className="break-all font-mono">{render(id)}</span>
        )}
      </Link>{" "}
      <CopyButton value={id} />
    </div>
  );
}
