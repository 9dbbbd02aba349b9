/**
 * What an approval card shows of a write over an existing value (issue 50): the old and new
 * texts a tool's arguments carry (edit_file's edits[].oldText/newText, old/new pairs…), as a
 * line diff. Pure and bounded: a longest common subsequence of lines after the common head and
 * tail are set aside, and past a budget of cells the middle is shown as removed then added.
 */

export type DiffLine = { kind: "same" | "removed" | "added"; text: string };

/** Cells of the LCS table at most (lines of the old middle × lines of the new). */
const MAX_CELLS = 250_000;

const linesOf = (s: string) => s.replace(/\r\n/g, "\n").split("\n");

/** The lines of `before` and `after`, each kept, removed or added, in order. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = linesOf(before);
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  const same = (lines: string[]): DiffLine[] => lines.map((text) => ({ kind: "same", text }));
  let middle: DiffLine[];
  if (!am.length || !bm.length || am.length * bm.length > MAX_CELLS) {
    middle = [...am.map((text): DiffLine => ({ kind: "removed", text })), ...bm.map((text): DiffLine => ({ kind: "added", text }))];
  } else {
    // lcs[i][j]: the longest common subsequence of am[i..] and bm[j..].
    const n = am.length;
    const m = bm.length;
    const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = am[i] === bm[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    middle = [];
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (am[i] === bm[j]) {
        middle.push({ kind: "same", text: am[i] });
        i++;
        j++;
      } else if (lcs[i + 1][j] >= lcs[i][j + 1]) middle.push({ kind: "removed", text: am[i++] });
      else middle.push({ kind: "added", text: bm[j++] });
    }
    while (i < n) middle.push({ kind: "removed", text: am[i++] });
    while (j < m) middle.push({ kind: "added", text: bm[j++] });
  }
  return [...same(a.slice(0, head)), ...middle, ...same(a.slice(a.length - tail))];
}

/** The names a tool's arguments give an old and a new text, as pairs (old key, new key). */
const PAIRS: [string, string][] = [
  ["oldText", "newText"],
  ["old_text", "new_text"],
  ["old_string", "new_string"],
  ["oldString", "newString"],
  ["old", "new"],
  ["before", "after"],
  ["old_value", "new_value"],
  ["previous", "current"],
];

export type TextChange = { label: string; before: string; after: string };

const isObj = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === "object" && !Array.isArray(v);

function pairIn(o: Record<string, unknown>): { before: string; after: string } | null {
  for (const [x, y] of PAIRS) if (typeof o[x] === "string" && typeof o[y] === "string") return { before: o[x] as string, after: o[y] as string };
  return null;
}

/**
 * The text changes a call's arguments describe: an old/new pair at the top, and each of the
 * first 20 items of an `edits` (or `changes`) list that is one (edit_file's {oldText, newText}).
 */
export function textChanges(params: unknown): TextChange[] {
  if (!isObj(params)) return [];
  const out: TextChange[] = [];
  const top = pairIn(params);
  if (top) out.push({ label: "change", ...top });
  for (const list of ["edits", "changes"]) {
    const items = params[list];
    if (!Array.isArray(items)) continue;
    items.slice(0, 20).forEach((item, i) => {
      const p = isObj(item) ? pairIn(item) : null;
      if (p) out.push({ label: `${list}[${i}]`, ...p });
    });
  }
  return out;
}
