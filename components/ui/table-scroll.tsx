import type { ReactNode } from "react";

/**
 * The box a wide table scrolls sideways in, on a phone. Positioned, so that what a table holds
 * absolutely placed (a header's `sr-only` label) is placed inside it: otherwise it escapes the
 * scroll and widens the whole page. `className` adds to it (a border, a margin, when it shows).
 */
export function TableScroll({ className = "", children }: { className?: string; children: ReactNode }) {
  return <div className={`relative overflow-x-auto ${className}`.trim()}>{children}</div>;
}
