import { displayUtc, relativeAge } from "@/lib/domain/time";

/**
 * A time as an age ("3 h ago") with the absolute UTC time on hover and for assistive technology
 * (`<time>` with its machine-readable value). `now` comes from the page's render, so server and
 * browser agree; the text is allowed to differ by the seconds between them.
 */
export function When({ at, now, className }: { at: string | null | undefined; now: number; className?: string }) {
  if (!at) return <span className={className}>—</span>;
  const absolute = displayUtc(at);
  return (
    <time dateTime={at} title={absolute} aria-label={`${relativeAge(at, now)}, ${absolute}`} className={className} suppressHydrationWarning>
      {relativeAge(at, now)}
    </time>
  );
}

/** The time a server page renders at, for the ages it shows (one value per page, passed down). */
export function renderedAt(): number {
  return Date.now();
}
