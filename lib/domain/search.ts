/**
 * Free-text search, the pure part: what of an operation is searchable (its search document),
 * how a person's query becomes a query the database's own full-text engine runs safely (SQLite
 * FTS5 MATCH, PostgreSQL tsquery), and how results show where they matched.
 *
 * One tokenizer decides for both databases: a word is a run of letters and digits, compared
 * with case and accents folded. Every term sent to an engine is made of those characters only
 * and quoted, so FTS syntax in a query (`"`, `*`, `NEAR(`, `-`, `:`, `OR`, `&`, `!`) is only ever
 * text: it can neither fail nor change the query.
 */
import { cut, isPlainObject } from "./json";
import type { OperationState, StoredStage } from "./operation";

/** The most characters of an operation's document that are indexed (head and body together). */
export const SEARCH_DOCUMENT_MAX = 4096;
/** A value longer than this is cut: the document stays readable, and no word is huge. */
const VALUE_MAX = 300;
/** At most this many nodes of params and evidence are walked per operation. */
const WALK_MAX = 2000;
/** A query's phrases beyond this many are ignored. */
const MAX_PHRASES = 16;
/** A prefix (`refu*`) needs at least this many characters: shorter ones match too much. */
const PREFIX_MIN = 3;

/** What of an operation an operator reads: the fields of its list row and page. */
export type SearchSource = {
  operation_id: string;
  tool?: string | null;
  target?: string | null;
  effect?: string | null;
  agent?: string | null;
  trajectory_id?: string | null;
  receipt_id?: string | null;
  /** The tool the receipt names, when it names one. */
  receipt_tool?: string | null;
  /** The classification's reason. */
  reason?: string | null;
  /** Reviewers' reasons, in order. */
  correction_reasons?: string[];
  params?: unknown;
  receipt_params?: unknown;
  /** Each canonical read's evidence (a string or an object). */
  evidence?: unknown[];
  side_effects?: string[];
};

/** `head`: the identifying fields (ranked higher); `body`: the rest. Lines of `label: value`. */
export type SearchDocument = { head: string; body: string };

const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);

/** The search source of an operation, from its stage records and derived state. */
export function searchSourceOf(operationId: string, stages: StoredStage[], state: OperationState, correctionReasons: string[] = []): SearchSource {
  const data = (stage: string) => stages.find((s) => s.stage === stage)?.data;
  const intent = data("intent");
  const receipt = data("receipt");
  const evidence: unknown[] = [];
  const sideEffects: string[] = [];
  for (const s of stages) {
    if (s.stage === "canonical_read" && isPlainObject(s.data) && s.data.evidence !== undefined) evidence.push(s.data.evidence);
    if (s.stage === "side_effects" && Array.isArray(s.data)) for (const e of s.data) if (isPlainObject(e) && str(e.name)) sideEffects.push(e.name as string);
  }
  const receiptTool = isPlainObject(receipt) ? (str(receipt.tool) ?? (isPlainObject(receipt.tool) ? str(receipt.tool.name) : null)) : null;
  return {
    operation_id: operationId,
    tool: state.tool,
    target: state.target,
    effect: isPlainObject(intent) ? str(intent.effect) : null,
    agent: state.agent,
    trajectory_id: state.trajectory_id,
    receipt_id: state.receipt_id,
    receipt_tool: receiptTool,
    reason: state.classification.reason,
    correction_reasons: correctionReasons,
    params: isPlainObject(intent) ? intent.params : undefined,
    receipt_params: isPlainObject(receipt) ? receipt.params : undefined,
    evidence,
    side_effects: sideEffects,
  };
}

const clean = (v: string) => {
  const flat = v.replace(/\s+/g, " ").trim();
  return cut(flat, VALUE_MAX);
};

/** Builds the capped document; lines repeat nothing, and huge or deep values are walked iteratively. */
export function searchDocument(src: SearchSource): SearchDocument {
  let budget = SEARCH_DOCUMENT_MAX;
  const seen = new Set<string>();
  const add = (lines: string[], label: string, value: unknown) => {
    const v = typeof value === "string" ? clean(value) : typeof value === "number" || typeof value === "boolean" ? String(value) : "";
    if (!v) return;
    const seenKey = `${label.replace(/^receipt\./, "")}\u0000${v}`;
    if (seen.has(seenKey)) return;
    const line = `${label}: ${v}`;
    const cost = line.length + 1;
    if (cost > budget) {
      budget = 0;
      return;
    }
    seen.add(seenKey);
    budget -= cost;
    lines.push(line);
  };
  const head: string[] = [];
  add(head, "tool", src.tool);
  add(head, "target", src.target);
  add(head, "effect", src.effect);
  add(head, "agent", src.agent);
  add(head, "trajectory", src.trajectory_id);
  add(head, "operation", src.operation_id);
  add(head, "receipt", src.receipt_id);
  const body: string[] = [];
  add(body, "reason", src.reason);
  for (const r of src.correction_reasons ?? []) add(body, "correction", r);
  if (src.receipt_tool && src.receipt_tool !== src.tool) add(body, "receipt tool", src.receipt_tool);
  const walk = (label: string, root: unknown) => {
    // Depth first in document order, without recursion; at most WALK_MAX nodes.
    const stack: [string, unknown][] = [[label, root]];
    let nodes = 0;
    while (stack.length && budget > 0 && nodes++ < WALK_MAX) {
      const [at, v] = stack.pop()!;
      if (Array.isArray(v)) {
        for (let i = Math.min(v.length, WALK_MAX) - 1; i >= 0; i--) stack.push([at, v[i]]);
      } else if (isPlainObject(v)) {
        const children: [string, unknown][] = [];
        for (const k in v) {
          if (children.length >= WALK_MAX) break;
          children.push([`${at}.${k}`, v[k]]);
        }
        for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
      } else add(body, at, v);
    }
  };
  walk("params", src.params);
  walk("receipt.params", src.receipt_params);
  for (const e of src.evidence ?? []) walk("evidence", e);
  for (const s of src.side_effects ?? []) add(body, "side effect", s);
  return { head: head.join("\n"), body: body.join("\n") };
}

/* -------------------------------------------------------------------------------------------- */
/* Words                                                                                        */
/* -------------------------------------------------------------------------------------------- */

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * A word as compared, folded as SQLite's FTS5 tokenizer (unicode61 remove_diacritics 2) folds
 * what it indexes, so that a query's words are the index's on SQLite too: lower case, and
 * diacritics removed from Latin letters only. Other scripts keep their marks and stay composed
 * (a Hangul syllable, a voiced kana), and no compatibility mapping is made (NFKD turned one
 * character into fifteen letters, and Korean and Japanese queries into words SQLite never held).
 */
export function fold(word: string): string {
  return word.normalize("NFD").replace(/(\p{Script=Latin})\p{M}+/gu, "$1").normalize("NFC").toLowerCase();
}

/**
 * The longest word kept, in characters: PostgreSQL refuses a lexeme over 2,046 bytes (a stored
 * document or a query holding one failed the whole request), and 200 characters are at most
 * 800 bytes of UTF-8. Both databases see the same cut words.
 */
export const MAX_WORD = 200;

const ASCII = /^[\x00-\x7f]*$/;

/** A matched word (letters and digits) folded and cut to MAX_WORD characters. */
function foldWord(raw: string): string {
  // ASCII letters and digits fold to their lower case and nothing else, one code unit a
  // character: the long way below gives the same at several times the cost (a fifth of the
  // server's busy time in PostgreSQL's batched ingest, whose search vectors are built here).
  if (ASCII.test(raw)) return (raw.length > MAX_WORD ? raw.slice(0, MAX_WORD) : raw).toLowerCase();
  // Folding may leave separators behind (a compatibility character): keep only letters and digits.
  return [...fold(raw).replace(/[^\p{L}\p{N}]/gu, "")].slice(0, MAX_WORD).join("");
}

/** The folded words of a text, in order, with where each starts and ends. */
function words(text: string): { word: string; start: number; end: number }[] {
  const out: { word: string; start: number; end: number }[] = [];
  for (const m of text.matchAll(WORD)) {
    const w = foldWord(m[0]);
    if (w) out.push({ word: w, start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/* -------------------------------------------------------------------------------------------- */
/* Queries                                                                                      */
/* -------------------------------------------------------------------------------------------- */

/**
 * A parsed query: each whitespace-separated part of it is a phrase of words (`ch_5531` is the
 * phrase "ch 5531"); an operation must match every phrase. `prefix`: the query ends in a word
 * of three or more characters followed by `*` (`refu*`), and that word also matches longer
 * words. Only asked for, never implied: a prefix of a word that nearly every operation holds
 * costs the engine far more than the word itself (search-scale bench, docs/BENCHMARKS.md).
 */
export type ParsedSearch = { phrases: string[][]; prefix: boolean };

export function parseSearch(q: string): ParsedSearch | null {
  const phrases: string[][] = [];
  let cut = false;
  for (const part of q.split(/\s+/)) {
    const ws = words(part).map((w) => w.word);
    if (!ws.length) continue;
    if (phrases.length === MAX_PHRASES) {
      cut = true;
      break;
    }
    phrases.push(ws);
  }
  if (!phrases.length) return null;
  const last = phrases[phrases.length - 1];
  const starred = !cut && /[\p{L}\p{N}]\*+$/u.test(q.trim());
  return { phrases, prefix: starred && last[last.length - 1].length >= PREFIX_MIN };
}

/** The FTS5 MATCH expression: every phrase quoted (implicit AND), `*` after the last for a prefix. */
export function ftsMatch(s: ParsedSearch): string {
  // Words hold letters and digits only, so a quote can never occur inside one.
  return s.phrases.map((p, i) => `"${p.join(" ")}"${s.prefix && i === s.phrases.length - 1 ? "*" : ""}`).join(" ");
}

const lexeme = (w: string) => (/['\\]/.test(w) ? `'${w.replace(/\\/g, "\\\\").replace(/'/g, "''")}'` : `'${w}'`);

/** The PostgreSQL tsquery text: quoted lexemes, `<->` within a phrase, `&` between phrases. */
export function tsQuery(s: ParsedSearch): string {
  return s.phrases
    .map((p, i) => p.map((w, j) => lexeme(w) + (s.prefix && i === s.phrases.length - 1 && j === p.length - 1 ? ":*" : "")).join(" <-> "))
    .join(" & ");
}

/**
 * The folded words of a text, in order: what `words` gives without where each one is. ASCII
 * text, nearly every document, is scanned by character code after one lower-casing of the
 * whole text: in ASCII a letter or digit is [A-Za-z0-9], and its fold is its lower case (as
 * `foldWord` says), so the words are the same; building search vectors through `words` (a
 * Unicode regex, an object a word) took ~27 µs an operation, this ~14 (docs/BENCHMARKS.md, session 19).
 */
export function foldedWords(text: string): string[] {
  if (!ASCII.test(text)) return words(text).map((w) => w.word);
  const lower = text.toLowerCase();
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 0;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out.push(lower.slice(start, Math.min(i, start + MAX_WORD)));
      start = -1;
    }
  }
  return out;
}

/**
 * The PostgreSQL tsvector text of a document: each word with its positions (so phrases match),
 * the head's weighted A (ranked higher), built here so both databases see the same words.
 */
export function tsVector(doc: SearchDocument): string {
  /** Each word's positions as tsvector text (`3A,7`), and how many. */
  const positions = new Map<string, { text: string; count: number }>();
  let n = 0;
  const addAll = (text: string, weight: string) => {
    for (const word of foldedWords(text)) {
      n = Math.min(n + 1, 16383); // PostgreSQL's largest position
      const at = positions.get(word);
      if (!at) positions.set(word, { text: `${n}${weight}`, count: 1 });
      else if (at.count < 256) {
        // and its most positions per lexeme
        at.text += `,${n}${weight}`;
        at.count++;
      }
    }
  };
  addAll(doc.head, "A");
  addAll(doc.body, "");
  let out = "";
  for (const w of [...positions.keys()].sort()) out += `${out ? " " : ""}${lexeme(w)}:${positions.get(w)!.text}`;
  return out;
}

/* -------------------------------------------------------------------------------------------- */
/* Showing a match                                                                              */
/* -------------------------------------------------------------------------------------------- */

export type TextPart = { text: string; mark: boolean };

function matcher(s: ParsedSearch | null): (word: string) => boolean {
  if (!s) return () => false;
  const exact = new Set(s.phrases.flat());
  const last = s.phrases[s.phrases.length - 1];
  const prefix = s.prefix ? last[last.length - 1] : null;
  return (w) => exact.has(w) || (prefix !== null && w.startsWith(prefix));
}

/** Splits text into parts, the words the search matches marked: render each part as text. */
export function highlightParts(text: string, s: ParsedSearch | null): TextPart[] {
  const hit = matcher(s);
  const parts: TextPart[] = [];
  let at = 0;
  const push = (t: string, mark: boolean) => {
    if (!t) return;
    const prev = parts[parts.length - 1];
    if (prev && prev.mark === mark) prev.text += t;
    else parts.push({ text: t, mark });
  };
  for (const w of words(text)) {
    if (!hit(w.word)) continue;
    push(text.slice(at, w.start), false);
    push(text.slice(w.start, w.end), true);
    at = w.end;
  }
  push(text.slice(at), false);
  return parts.length ? parts : [{ text, mark: false }];
}

export type SnippetLine = { label: string; parts: TextPart[] };

const WINDOW = 120;

/** The document's lines that match, best first (most distinct words matched), at most two. */
export function snippetOf(doc: SearchDocument, s: ParsedSearch, max = 2): SnippetLine[] {
  const hit = matcher(s);
  const scored: { label: string; value: string; score: number; first: number; order: number }[] = [];
  const lines = [doc.head, doc.body].filter(Boolean).join("\n").split("\n");
  lines.forEach((line, order) => {
    const colon = line.indexOf(": ");
    if (colon < 0) return;
    const label = line.slice(0, colon);
    const value = line.slice(colon + 2);
    const matched = words(value).filter((w) => hit(w.word));
    if (!matched.length) return;
    scored.push({ label, value, score: new Set(matched.map((m) => m.word)).size, first: matched[0].start, order });
  });
  scored.sort((a, b) => b.score - a.score || a.order - b.order);
  return scored.slice(0, max).map(({ label, value, first }) => {
    let text = value;
    if (value.length > WINDOW) {
      const start = Math.max(0, Math.min(first - 40, value.length - WINDOW));
      text = `${start > 0 ? "…" : ""}${value.slice(start, start + WINDOW)}${start + WINDOW < value.length ? "…" : ""}`;
    }
    return { label, parts: highlightParts(text, s) };
  });
}
