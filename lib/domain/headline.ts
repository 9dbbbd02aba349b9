/**
 * What a page leads an operation with (issue 50): what happened — the tool, its target and the
 * key argument ("write_file · fs · out/report.md") — rather than its id, which is shown short
 * beside it (`shortId`, the whole id in a title and a copy button). Pure and bounded: a hostile
 * intent's params cost at most a look at its first keys.
 */

/** Arguments that name what a call acts on, best first: their value alone says it. */
const NAMING_KEYS = [
  "path", "file_path", "filepath", "filename", "file", "source", "destination", "url", "uri", "href",
  "to", "recipient", "recipients", "email", "channel", "repo", "repository", "title", "subject", "name", "query", "key",
];
/** Ids that are the call's own (the operation id a gateway reads, an idempotency key): the id says them already. */
const OWN_ID_KEYS = new Set(["request_id", "requestid", "idempotency_key", "idempotencykey", "operation_id", "operationid", "call_id", "callid"]);
/** Amounts, said with their key (and currency, when the arguments name one): "amount: 480 EUR". */
const QUANTITY_KEYS = ["amount", "total", "price", "quantity", "count", "limit"];
/** At most this many keys are looked at, and a value is cut to this many characters. */
const KEYS_LOOKED_AT = 200;
const VALUE_CHARS = 60;
const TARGET_CHARS = 40;

export type KeyArgument = { key: string; value: string; /** The key is said with it ("amount: 480"): its value alone would not say what it is. */ named: boolean };

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
/** One line of text for a scalar (a string's first line; numbers and booleans as written); null for anything else or an empty string. */
function scalarText(v: unknown): string | null {
  if (typeof v === "string") {
    const line = v.trim().split(/\r?\n/, 1)[0]?.trim() ?? "";
    return line === "" ? null : line;
  }
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  if (typeof v === "boolean") return String(v);
  return null;
}
/** A short text of a list of scalars (recipients: ["a@x", "b@x"] → "a@x, b@x"). */
function listText(v: unknown): string | null {
  if (!Array.isArray(v) || !v.length) return null;
  const parts = v.slice(0, 3).map(scalarText);
  if (parts.some((p) => p === null)) return null;
  return `${parts.join(", ")}${v.length > 3 ? ` +${v.length - 3}` : ""}`;
}
const isIdLike = (k: string) => /^(id|uuid|key|slug)$/i.test(k) || /(_id|Id|_key|_uuid)$/.test(k);

/**
 * The argument that says what a call acts on: a naming key (path, file, url, to, title, name…,
 * in that order), else an id-like key (not the call's own request id), else an amount (with its
 * currency), else the first short one-line string, else the first number; null when there is none (or no params object).
 */
export function keyArgument(params: unknown): KeyArgument | null {
  if (!params || typeof params !== "object" || Array.isArray(params)) return null;
  const entries: [string, unknown][] = [];
  for (const k in params) {
    if (!Object.hasOwn(params, k)) continue;
    entries.push([k, (params as Record<string, unknown>)[k]]);
    if (entries.length >= KEYS_LOOKED_AT) break;
  }
  const lower = new Map(entries.map(([k, v]) => [k.toLowerCase(), [k, v] as const]));
  for (const name of NAMING_KEYS) {
    const hit = lower.get(name);
    const text = hit ? (scalarText(hit[1]) ?? listText(hit[1])) : null;
    if (hit && text) return { key: hit[0], value: cut(text, VALUE_CHARS), named: false };
  }
  for (const [k, v] of entries) {
    if (!isIdLike(k) || OWN_ID_KEYS.has(k.toLowerCase())) continue;
    const text = scalarText(v);
    if (text) return { key: k, value: cut(text, VALUE_CHARS), named: false };
  }
  for (const name of QUANTITY_KEYS) {
    const hit = lower.get(name);
    const text = hit ? scalarText(hit[1]) : null;
    if (!hit || !text) continue;
    const currency = scalarText(lower.get("currency")?.[1]);
    return { key: hit[0], value: cut(currency && currency.length <= 8 ? `${text} ${currency}` : text, VALUE_CHARS), named: true };
  }
  for (const [k, v] of entries) {
    if (OWN_ID_KEYS.has(k.toLowerCase()) || typeof v !== "string") continue;
    const text = scalarText(v);
    if (text && text.length <= VALUE_CHARS) return { key: k, value: text, named: true };
  }
  for (const [k, v] of entries) {
    if (typeof v === "number" && Number.isFinite(v)) return { key: k, value: String(v), named: true };
  }
  return null;
}

/** "tool · target · key argument" for an operation with a tool; null without one (the page then leads with the id). */
export function headline(op: { tool: string | null; target?: string | null; params?: unknown }): string | null {
  const tool = op.tool?.trim();
  if (!tool) return null;
  const key = keyArgument(op.params);
  const target = op.target?.trim() ? cut(op.target.trim().split(/\r?\n/, 1)[0], TARGET_CHARS) : null;
  return [cut(tool, VALUE_CHARS), target, key ? (key.named ? `${key.key}: ${key.value}` : key.value) : null].filter(Boolean).join(" · ");
}

/** A run of hex (a digest) or a UUID inside an id. */
const OPAQUE = /[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[0-9a-f]{24,}/gi;

/**
 * An id as a page shows it beside what happened: a digest or UUID inside it cut to its first 8
 * characters ("gw:9f86d081…:3", "mcp:6f1c2e0a…"). The words of an id someone chose stay whole,
 * however long (a page wraps them): only what no person reads is cut. The whole id goes in a
 * title and a copy button.
 */
export function shortId(id: string): string {
  return id.replace(OPAQUE, (m) => `${m.slice(0, 8)}…`);
}

/**
 * What a tool answered, as text, from a receipt's `raw` (the gateway's `{text}`, an MCP result's
 * text content, an OpenTelemetry span's result): a string as it is, else the text parts joined;
 * null when the result holds no text (the page then shows its JSON).
 */
export function resultText(raw: unknown): string | null {
  if (typeof raw === "string") return raw.trim() === "" ? null : raw;
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return null;
  const o = raw as Record<string, unknown>;
  if (typeof o.text === "string" && o.text.trim() !== "") return o.text;
  if (Array.isArray(o.content)) {
    const parts = o.content.slice(0, 50).flatMap((c) => (c && typeof c === "object" && (c as { type?: unknown }).type === "text" && typeof (c as { text?: unknown }).text === "string" ? [(c as { text: string }).text] : []));
    if (parts.length) return parts.join("\n");
  }
  for (const k of ["output", "result", "message"]) if (typeof o[k] === "string" && (o[k] as string).trim() !== "") return o[k] as string;
  return null;
}
