/**
 * Structural checks on parsed JSON before any schema sees it. Iterative on purpose: a
 * 20,000-deep document must not overflow the stack of whatever walks it later (validation,
 * canonical hashing).
 */
export const MAX_DEPTH = 64;
/**
 * At most this many arrays and objects in one record. A 1 MiB record can hold half a million
 * empty arrays; every later step (validation, canonical JSON, hashing) costs per container, so
 * a hostile record is refused here, after a walk that stops at the limit.
 */
export const MAX_CONTAINERS = 100_000;

export type JsonProblem = { path: string; message: string };

export function checkJsonShape(value: unknown, maxDepth = MAX_DEPTH, maxContainers = MAX_CONTAINERS): JsonProblem | null {
  let containers = 0;
  // Only arrays and objects get a frame (a record of 100,000 plain values allocates none for
  // them). Paths are built only for a problem: a frame knows its parent and its key or index.
  type Frame = { v: object; depth: number; parent: Frame | null; key: string | number | null };
  const pathOf = (parent: Frame | null, key: string | number | null): string => {
    const parts: string[] = [];
    let at: { parent: Frame | null; key: string | number | null } | null = { parent, key };
    for (; at && at.key !== null; at = at.parent) parts.push(typeof at.key === "number" ? `[${at.key}]` : at.parent?.key === null ? at.key : `.${at.key}`);
    return parts.reverse().join("") || "(record)";
  };
  /** A problem of a value that is no array or object, or null. */
  const leafProblem = (v: unknown): string | null => {
    if (typeof v === "string") return textProblem(v);
    if (typeof v === "number" && !Number.isFinite(v)) return "the number is too large to represent (beyond a 64-bit float)";
    return null;
  };
  const stack: Frame[] = [];
  const visit = (v: unknown, depth: number, parent: Frame | null, key: string | number | null): JsonProblem | null => {
    if (v === null || typeof v !== "object") {
      const bad = leafProblem(v);
      return bad ? { path: pathOf(parent, key), message: bad } : null;
    }
    if (depth >= maxDepth) return { path: pathOf(parent, key), message: `nesting is deeper than ${maxDepth} levels` };
    if (++containers > maxContainers) {
      return { path: pathOf(parent, key), message: `more than ${maxContainers.toLocaleString("en")} arrays and objects in one record` };
    }
    stack.push({ v, depth, parent, key });
    return null;
  };
  const root = visit(value, 0, null, null);
  if (root) return root;
  while (stack.length) {
    const frame = stack.pop()!;
    const { v, depth } = frame;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const bad = visit(v[i], depth + 1, frame, i);
        if (bad) return bad;
      }
    } else {
      const keys = Object.keys(v);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        if (key === "__proto__") return { path: pathOf(frame, key), message: "the key \"__proto__\" is not allowed" };
        const badKey = textProblem(key);
        if (badKey) return { path: pathOf(frame, key), message: `the key ${badKey.replace("the text ", "")}` };
        const bad = visit((v as Record<string, unknown>)[key], depth + 1, frame, key);
        if (bad) return bad;
      }
    }
  }
  return null;
}

/** The text with every unpaired surrogate as U+FFFD (String.prototype.toWellFormed, Node 20+; typed from ES2024, past this project's lib). */
export const wellFormed = (s: string): string => (s as unknown as { toWellFormed(): string }).toWellFormed();

/** The first `n` UTF-16 units of a text, never ending inside a surrogate pair (a lone half is not Unicode: ingest refuses it). */
export const cut = (text: string, n: number): string => (text.length <= n ? text : text.slice(0, n).replace(/[\uD800-\uDBFF]$/, ""));

/**
 * Text every database stores the same way: no unpaired UTF-16 surrogate (a `\uD800` escape
 * alone is valid JSON but not Unicode, and cannot be hashed canonically), and no NUL character
 * (PostgreSQL's text cannot hold one).
 */
const BAD_TEXT = /[\p{Cs}\u0000]/u;

export function textProblem(text: string): string | null {
  const m = BAD_TEXT.exec(text);
  if (!m) return null;
  return m[0] === "\u0000" ? "the text contains a NUL character (\\u0000)" : "the text contains an unpaired surrogate (\\uD800–\\uDFFF): it is not valid Unicode";
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * The first object key that appears twice in one object of this JSON text, as a path, or null.
 * JSON.parse keeps the last of duplicate keys while other parsers keep the first, so a record
 * with a duplicate key can mean two different things: such a body is refused, never guessed.
 * Expects text that JSON.parse has already accepted.
 */
export function findDuplicateKey(text: string): string | null {
  const scan = scanDuplicateKey(text, Infinity);
  for (;;) {
    const step = scan.next();
    if (step.done) return step.value;
  }
}

/**
 * findDuplicateKey in slices: the generator pauses after about every `slice` characters, so
 * a caller can let other work run while a 4 MiB body is scanned (lib/api/body.ts).
 */
export function* scanDuplicateKey(text: string, slice = 256 * 1024): Generator<void, string | null> {
  let pauseAt = slice;
  type Frame = { keys: Set<string> | null; path: string; index: number; expectKey: boolean; lastKey: string };
  const stack: Frame[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    if (i >= pauseAt) {
      yield;
      pauseAt = i + slice;
    }
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = i + 1;
      for (;;) {
        end = text.indexOf('"', end);
        // Count the backslashes right before this quote: odd means the quote is escaped.
        let k = end - 1;
        let backslashes = 0;
        while (text.charCodeAt(k) === 0x5c) {
          backslashes++;
          k--;
        }
        if (backslashes % 2 === 0) break;
        end++;
      }
      const top = stack[stack.length - 1];
      if (top && top.keys && top.expectKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        const path = top.path ? `${top.path}.${key}` : key;
        if (top.keys.has(key)) return path;
        top.keys.add(key);
        top.expectKey = false;
        top.lastKey = path;
      }
      i = end + 1;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const parent = stack[stack.length - 1];
      const path = !parent ? "" : parent.keys ? parent.lastKey : `${parent.path}[${parent.index}]`;
      stack.push({ keys: c === 0x7b ? new Set() : null, path, index: 0, expectKey: c === 0x7b, lastKey: "" });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top.keys) top.expectKey = true;
      else top.index++;
    }
    i++;
  }
  return null;
}
