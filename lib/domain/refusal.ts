import { z } from "zod";

/**
 * Refusals a person can read. A schema's issues become sentences that name the field in the
 * API's own words (`outcome`, `filters.tools[2]`) and say what would be accepted ("outcome must
 * be one of …", "limit must be a whole number from 1 to 200", "url is required"); the issues
 * themselves, as the schema reported them, are kept for `details`. Every API route, form and
 * page that validates with a schema refuses through this.
 *
 * What a field accepts comes from the issue (an enum's values, a maximum), from the schema
 * (a number's bounds, an object's fields), or, where the schema cannot say it (a limit that is
 * clamped rather than refused), from the field's own words: `.meta({ accepts: "…" })`.
 */

/** Words of the schema library's own messages that no refusal shown to a person may carry. */
export const SCHEMA_JARGON: readonly RegExp[] = [/Invalid (option|input|string|number|value|key|element)/, /\bexpected\b/, /\breceived\b/, /\bNaN\b/, /Too (big|small)/, /Unrecognized key/, /\bundefined\b/];

/** One issue as the schema reported it: what `details` carries. */
export type IssueDetail = { path: string; code: string; message: string } & Record<string, unknown>;

export type RefusalOptions = {
  /** The value that was refused: counts ("has 51 items") and missing fields are read off it. */
  input?: unknown;
  /** The schema that refused it: numbers' bounds, objects' fields and `meta.accepts` are read off it. */
  schema?: z.ZodType;
  /** What the whole value is called ("request", "query", "record"). */
  root?: string;
  /** What its keys are called ("field", "parameter", "filter"). */
  key?: string;
  /** At most this many sentences in the message (the rest are counted). */
  max?: number;
};

const MAX_DETAILS = 20;
const MAX_LISTED = 20;
type Path = readonly PropertyKey[];

/** The message (sentences joined by "; ") and the details (the schema's issues, at most 20). */
export function describeRefusal(error: z.ZodError, opts: RefusalOptions = {}): { message: string; details: IssueDetail[] } {
  const max = opts.max ?? 5;
  // Unknown keys are said first: a misspelt name is most often the cause of what follows, and a
  // person reads the first sentences. Then one sentence per field (an empty id is "must not be
  // empty", not also "not in an accepted form"); details keep every issue in the schema's order.
  // Sentences only for the issues shown: a refused array of 100,000 elements has as many issues.
  const unknownFirst = [...error.issues.filter((i) => i.code === "unrecognized_keys"), ...error.issues.filter((i) => i.code !== "unrecognized_keys")];
  const said = new Set<string>();
  const shown: string[] = [];
  let rest = 0;
  for (const i of unknownFirst) {
    const field = i.path.length && i.code !== "unrecognized_keys" ? pathName(i.path) : null;
    if (field !== null) {
      if (said.has(field)) continue;
      said.add(field);
    }
    if (shown.length < max) shown.push(sentenceFor(i, i.path, opts));
    else rest++;
  }
  if (rest > 0) shown.push(moreProblems(rest));
  return { message: shown.join("; "), details: error.issues.slice(0, MAX_DETAILS).map((i) => detailOf(i, opts.root ?? "(record)")) };
}

/** A field's path as the API writes it: `filters.tools[2]`; the root's name for the whole value. */
export function pathName(path: Path, root = "request"): string {
  if (!path.length) return root;
  return path
    .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
    .join("")
    .replace(/^\./, "")
    .slice(0, 200);
}

function detailOf(i: z.core.$ZodIssue, root: string): IssueDetail {
  const { path, code, message, ...rest } = i as z.core.$ZodIssue & Record<string, unknown>;
  const detail: IssueDetail = { path: pathName(path, root), code, message: clip(message) };
  for (const k of ["expected", "values", "minimum", "maximum", "origin", "keys", "format"]) {
    const v = rest[k];
    if (v === undefined) continue;
    detail[k] = Array.isArray(v) ? v.slice(0, MAX_LISTED).map(jsonSafe) : jsonSafe(v);
  }
  return detail;
}

/** Bounded: a refused body's own keys and values are echoed at most 200 characters each. */
const jsonSafe = (v: unknown) => (typeof v === "bigint" ? v.toString() : typeof v === "string" ? clip(v, 200) : v);
const clip = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}…` : s);
const count = (n: number | bigint) => n.toLocaleString("en");

function sentenceFor(issue: z.core.$ZodIssue, path: Path, opts: RefusalOptions): string {
  const root = opts.root ?? "record";
  const key = opts.key ?? "field";
  const field = path.length ? pathName(path) : `the ${root}`;
  const value = valueAt(opts.input, path);
  const schema = opts.schema ? schemaAt(opts.schema, path) : null;
  const accepts = schema?.accepts;
  const missing = value.found ? value.value === undefined : /received undefined$/.test(issue.message);
  if (missing && path.length && (issue.code === "invalid_type" || issue.code === "invalid_value" || issue.code === "invalid_union")) return `${field} is required`;
  switch (issue.code) {
    case "invalid_type": {
      return `${field} must be ${accepts ?? (issue.expected === "number" || issue.expected === "int" ? numberWords(schema, issue.expected === "int") : typeWords(issue.expected))}`;
    }
    case "invalid_value":
      return `${field} must be ${accepts ?? oneOf(issue.values)}`;
    case "too_big":
    case "too_small":
      // A schema's own predicate ("needs at least one rule") says more than a count; anything else, the count.
      if (path.length && !isDefaultMessage(issue.message) && PREDICATE.test(issue.message)) return customSentence(field, issue.message, path);
      return sizeSentence(issue, field, value, schema);
    case "unrecognized_keys": {
      const names = issue.keys.slice(0, 5).map((k) => JSON.stringify(clip(k, 60)));
      const more = issue.keys.length > 5 ? ` and ${count(issue.keys.length - 5)} more` : "";
      const list = issue.keys.length === 1 ? `an unknown ${key} ${names[0]}` : `unknown ${key}s ${names.join(", ")}${more}`;
      const known = schema?.fields;
      return `${field} has ${list}${known?.length ? `; the accepted ${key}s are ${known.join(", ")}` : ""}`;
    }
    case "invalid_union":
      return unionSentence(issue, path, field, opts);
    case "invalid_format":
      if (issue.format === "regex" && !isDefaultMessage(issue.message)) return customSentence(field, issue.message, path);
      return issue.format === "regex" ? `${field} is not in an accepted form` : `${field} must be ${FORMATS[issue.format] ?? `a valid ${issue.format}`}`;
    case "not_multiple_of":
      return `${field} must be a multiple of ${String(issue.divisor)}`;
    case "invalid_key":
      return `${field} has a key that is not accepted`;
    case "invalid_element":
      return `${field} has a value that is not accepted`;
    default:
      return isDefaultMessage(issue.message) ? `${field} is not accepted` : customSentence(field, issue.message, path);
  }
}

/** Messages written by the schema library rather than by us. */
const isDefaultMessage = (m: string) => SCHEMA_JARGON.some((re) => re.test(m));

const FORMATS: Record<string, string> = { email: "an email address", url: "a URL", datetime: "an ISO 8601 date-time", date: "a date (YYYY-MM-DD)", uuid: "a UUID" };

const PREDICATE = /^(must|is|are|has|have|needs?|may|cannot|can't|should|does|names?|takes)\b/;

/** A schema's own words, after the field they are about (a refusal at the root is a sentence already). */
function customSentence(field: string, message: string, path: Path): string {
  const m = clip(message);
  if (!path.length) return m;
  const own = String(path[path.length - 1]);
  if (m.startsWith(`${own} `)) return `${field}${m.slice(own.length)}`; // "params_digest is …" names its field already
  if (PREDICATE.test(m)) return `${field} ${m}`;
  if (/^(a|an|one of|at most|at least)\b/.test(m)) return `${field} must be ${m}`;
  return `${field}: ${m}`;
}

function typeWords(expected: string): string {
  const words: Record<string, string> = { string: "text", number: "a number", int: "a whole number", boolean: "true or false", object: "a JSON object", record: "a JSON object", array: "a list", null: "null", bigint: "a whole number", date: "a date" };
  return words[expected] ?? `a ${expected}`;
}

function oneOf(values: readonly unknown[]): string {
  const shown = values.slice(0, MAX_LISTED).map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
  const more = values.length > MAX_LISTED ? ` (and ${count(values.length - MAX_LISTED)} more)` : "";
  if (shown.length === 1) return shown[0];
  if (shown.length === 2 && !more) return `${shown[0]} or ${shown[1]}`;
  return `one of ${shown.join(", ")}${more}`;
}

/** "a whole number from 1 to 200", from the field's words or its schema's bounds. */
function numberWords(schema: FieldSchema | null, whole = false): string {
  if (schema?.accepts) return schema.accepts;
  const kind = whole || schema?.int ? "a whole number" : "a number";
  const min = schema?.min ?? null;
  const max = schema?.max ?? null;
  if (min !== null && max !== null) return `${kind} from ${count(min)} to ${count(max)}`;
  if (min !== null) return `${kind} of at least ${count(min)}`;
  if (max !== null) return `${kind} of at most ${count(max)}`;
  return kind;
}

function sizeSentence(issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall, field: string, value: Found, schema: FieldSchema | null): string {
  const big = issue.code === "too_big";
  const limit = big ? (issue as z.core.$ZodIssueTooBig).maximum : (issue as z.core.$ZodIssueTooSmall).minimum;
  const n = Number(limit);
  if (issue.origin === "number" || issue.origin === "int" || issue.origin === "bigint") return `${field} must be ${numberWords(schema, issue.origin !== "number")}`;
  const unit = issue.origin === "string" ? "character" : issue.origin === "array" || issue.origin === "set" ? "item" : issue.origin === "map" ? "entry" : null;
  if (!unit) return `${field} must be ${big ? "at most" : "at least"} ${String(limit)}`;
  const units = (k: number) => `${count(k)} ${k === 1 ? unit : unit === "entry" ? "entries" : `${unit}s`}`;
  if (!big && n === 1) return `${field} must not be empty`;
  const v = value.found ? value.value : undefined;
  const size = typeof v === "string" ? v.length : Array.isArray(v) ? v.length : null;
  const exact = issue.exact ? "exactly" : big ? "at most" : "at least";
  if (size !== null) return `${field} has ${units(size)}; ${exact} ${count(n)} ${n === 1 ? "is" : "are"} accepted`;
  return `${field} must have ${exact} ${units(n)}`;
}

/** A value that may be any of several shapes: each shape it may take, or what was wrong within the one it came closest to. */
function unionSentence(issue: z.core.$ZodIssueInvalidUnion, path: Path, field: string, opts: RefusalOptions): string {
  const shapes = issue.errors.map((option) => {
    const [first] = option;
    if (option.length !== 1 || first.path.length) return null;
    if (first.code === "invalid_type") return typeWords(first.expected);
    if (first.code === "invalid_value") return oneOf(first.values);
    return null;
  });
  if (shapes.length && shapes.every((s) => s !== null)) return `${field} must be ${[...new Set(shapes)].join(" or ")}`;
  const closest = issue.errors.find((option, i) => shapes[i] === null && option.length) ?? issue.errors.find((o) => o.length);
  if (!closest) return `${field} is not in an accepted form`;
  // Bounded like the message itself: the closest shape may hold an issue for every element of a huge array.
  const within = closest.slice(0, UNION_SENTENCES).map((i) => sentenceFor(i, [...path, ...i.path], { ...opts, schema: undefined }));
  if (closest.length > UNION_SENTENCES) within.push(moreProblems(closest.length - UNION_SENTENCES));
  return clip(within.join("; "), MAX_UNION_CHARS);
}

const UNION_SENTENCES = 5;
const MAX_UNION_CHARS = 1000;
const moreProblems = (n: number) => `and ${count(n)} more problem${n === 1 ? "" : "s"}`;

type Found = { found: true; value: unknown } | { found: false };

function valueAt(input: unknown, path: Path): Found {
  if (input === undefined) return { found: false };
  let v: unknown = input;
  for (const p of path) {
    if (v === null || typeof v !== "object" || typeof p === "symbol" || !Object.prototype.hasOwnProperty.call(v, p)) return { found: true, value: undefined };
    v = (v as Record<string | number, unknown>)[p];
  }
  return { found: true, value: v };
}

type FieldSchema = { accepts?: string; min?: number | null; max?: number | null; int?: boolean; fields?: string[] };

type Def = { type: string; innerType?: z.ZodType; in?: z.ZodType; shape?: Record<string, z.ZodType>; element?: z.ZodType; valueType?: z.ZodType; getter?: () => z.ZodType };
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "catch", "readonly", "nonoptional"]);

/** The schema of the field at `path`, unwrapped, with the words and bounds it declares; null where it cannot be told (inside a union). */
function schemaAt(schema: z.ZodType, path: Path): FieldSchema | null {
  let s: z.ZodType | undefined = schema;
  let accepts: string | undefined;
  const unwrap = () => {
    for (let guard = 0; s && guard < 20; guard++) {
      const words = (z.globalRegistry.get(s) as { accepts?: unknown } | undefined)?.accepts;
      if (typeof words === "string") accepts ??= words;
      const def = defOf(s);
      if (WRAPPERS.has(def.type)) s = def.innerType;
      else if (def.type === "pipe") s = def.in;
      else if (def.type === "lazy") s = def.getter?.();
      else return;
    }
  };
  unwrap();
  for (const p of path) {
    if (!s) return null;
    const def = defOf(s);
    accepts = undefined;
    if (def.type === "object" && typeof p === "string") s = def.shape?.[p];
    else if (def.type === "array" && typeof p === "number") s = def.element;
    else if (def.type === "record") s = def.valueType;
    else return null;
    unwrap();
  }
  if (!s) return accepts ? { accepts } : null;
  const def = defOf(s);
  const out: FieldSchema = { accepts };
  if (def.type === "object") out.fields = Object.keys(def.shape ?? {}).slice(0, 40);
  if (def.type === "number") {
    const n = s as unknown as { minValue: number | null; maxValue: number | null; isInt: boolean };
    out.min = Number.isFinite(n.minValue) ? n.minValue : null;
    out.max = Number.isFinite(n.maxValue) ? n.maxValue : null;
    out.int = n.isInt;
  }
  return out;
}
