import { jsonEqual } from "./hash";

/**
 * What a page shows of untrusted JSON (TRUST.md "Pages render such payloads truncated"): a
 * payload of 100,000 keys or a megabyte string is shown in part, with what was left out
 * counted, and the whole is a download away. Every function here costs at most linear time
 * in its input and produces output bounded by its budget.
 */
export const PREVIEW: Budget = { maxChars: 20_000, maxKeys: 100, maxString: 2_000, maxNodes: 2_000 };

export type Preview = {
  /** Pretty-printed JSON of what is shown; omissions marked "… N more …". */
  text: string;
  /** Whether anything was left out. */
  truncated: boolean;
};

type Budget = { maxChars: number; maxKeys: number; maxString: number; maxNodes: number };

/** A copy of `value` cut to the budget (never more than maxNodes values visited), and whether anything was cut. */
function pruned(value: unknown, b: Budget): { value: unknown; truncated: boolean } {
  let nodes = 0;
  let truncated = false;
  const more = (n: number, what: string) => {
    truncated = true;
    return `… ${n.toLocaleString("en")} more ${what}`;
  };
  const prune = (v: unknown): unknown => {
    nodes++;
    if (typeof v === "string") return v.length > b.maxString ? `${v.slice(0, b.maxString)}${more(v.length - b.maxString, "characters")}` : v;
    if (v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (let i = 0; i < v.length; i++) {
        if (i >= b.maxKeys || nodes >= b.maxNodes) {
          out.push(more(v.length - i, v.length - i === 1 ? "item" : "items"));
          break;
        }
        out.push(prune(v[i]));
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    let i = 0;
    let total = -1;
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      if (i >= b.maxKeys || nodes >= b.maxNodes) {
        total = Object.keys(v).length;
        break;
      }
      // defineProperty, not `out[k] =`: a "__proto__" key would set the prototype and vanish from the preview.
      Object.defineProperty(out, k, { value: prune((v as Record<string, unknown>)[k]), enumerable: true, writable: true, configurable: true });
      i++;
    }
    if (total >= 0) out["…"] = more(total - i, total - i === 1 ? "key" : "keys");
    return out;
  };
  const v = prune(value ?? null);
  return { value: v, truncated };
}

/** Pretty JSON of `value`, cut to the budget: each object and array to its first `maxKeys` entries, long strings, and the whole. */
export function previewJson(value: unknown, budget: Partial<Budget> = {}): Preview {
  const b = { ...PREVIEW, ...budget };
  const p = pruned(value, b);
  let text = JSON.stringify(p.value, null, 2);
  let truncated = p.truncated;
  if (text.length > b.maxChars) {
    text = `${text.slice(0, b.maxChars)}\n… ${(text.length - b.maxChars).toLocaleString("en")} more characters`;
    truncated = true;
  }
  return { text, truncated };
}

/** One value in a table cell: compact JSON, cut to about `max` characters. */
export function cellText(value: unknown, max = 200): string {
  if (value === undefined) return "—";
  const text = JSON.stringify(pruned(value, { maxChars: max, maxKeys: 20, maxString: max, maxNodes: 100 }).value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export type ParamRow = { key: string; intended: unknown; passed: unknown; differs: boolean };

export type ParamsDiff = {
  /** The rows to show: differing keys first, then the others, each group sorted; at most maxRows. */
  rows: ParamRow[];
  /** Keys in either object. */
  total: number;
  /** Keys whose values differ (intended present). */
  changed: number;
  /** Keys not shown. */
  omitted: number;
};

/**
 * The parameters the tool received against those the agent built, key by key: one pass over
 * each object (a Map and a Set keyed by parameter name; never a scan per key), each value
 * compared by one structural walk. Only the rows shown are sorted.
 */
export function diffParams(intended: Record<string, unknown> | null, passed: Record<string, unknown>, maxRows = 200): ParamsDiff {
  const keys = new Set<string>(Object.keys(passed));
  if (intended) for (const k of Object.keys(intended)) keys.add(k);
  const differing: string[] = [];
  const same: string[] = [];
  for (const k of keys) {
    const a = intended && Object.hasOwn(intended, k) ? intended[k] : undefined;
    const b = Object.hasOwn(passed, k) ? passed[k] : undefined;
    const differs = intended !== null && (a === undefined || b === undefined ? a !== b : !jsonEqual(a, b));
    (differs ? differing : same).push(k);
  }
  const shownDiffering = differing.length > maxRows ? differing.slice(0, maxRows) : differing;
  const room = maxRows - shownDiffering.length;
  const shownSame = same.length > room ? same.slice(0, room) : same;
  const row = (k: string, differs: boolean): ParamRow => ({
    key: k,
    intended: intended && Object.hasOwn(intended, k) ? intended[k] : undefined,
    passed: Object.hasOwn(passed, k) ? passed[k] : undefined,
    differs,
  });
  return {
    rows: [...shownDiffering.sort().map((k) => row(k, true)), ...shownSame.sort().map((k) => row(k, false))],
    total: keys.size,
    changed: differing.length,
    omitted: keys.size - shownDiffering.length - shownSame.length,
  };
}
