import type { WebhookEvent } from "./events";

/** A body stays under this many bytes (docs/API.md "Webhooks"): large values are cut, the link kept. */
export const MAX_BODY_BYTES = 20_000;

const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/** Strings cut to `chars`, arrays to `items`, objects to `items` keys, nesting to `depth`. */
function cut(value: unknown, chars: number, items: number, depth: number): unknown {
  if (typeof value === "string") return value.length > chars ? `${value.slice(0, chars)}… (${value.length - chars} more characters)` : value;
  if (value === null || typeof value !== "object") return value;
  if (depth <= 0) return "… (nested value left out)";
  if (Array.isArray(value)) {
    const kept = value.slice(0, items).map((v) => cut(v, chars, items, depth - 1));
    if (value.length > items) kept.push(`… (${value.length - items} more items)`);
    return kept;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries.slice(0, items)) out[k.length > chars ? k.slice(0, chars) : k] = cut(v, chars, items, depth - 1);
  if (entries.length > items) out["…"] = `${entries.length - items} more keys`;
  return out;
}

/**
 * The JSON body of an event: `{"type", "timestamp", "data"}`, at most MAX_BODY_BYTES. When the
 * whole does not fit, values are cut ever shorter and `data.truncated` is true; `data.link`
 * (the page with everything) is always kept whole.
 */
export function eventBody(event: Pick<WebhookEvent, "type" | "timestamp" | "data" | "link">, max = MAX_BODY_BYTES): string {
  const whole = JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
  if (bytes(whole) <= max) return whole;
  for (const [chars, items, depth] of [
    [2000, 100, 8],
    [500, 50, 6],
    [200, 20, 4],
    [50, 10, 3],
  ] as const) {
    const data = { ...(cut(event.data, chars, items, depth) as Record<string, unknown>), truncated: true, link: event.link };
    const text = JSON.stringify({ type: event.type, timestamp: event.timestamp, data });
    if (bytes(text) <= max) return text;
  }
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: { truncated: true, link: event.link } });
}
