import { get as pointerGet, type Json } from "@hyperjump/json-pointer";
import { jsonEqual } from "./hash";
import { cut, isPlainObject } from "./json";
import type { VerifierDefinition } from "./verifier";
import { expectedValue, maskSecrets, TemplateError, type TemplateContext } from "./verifier-template";
import type { ReadStatus } from "./wire";

/**
 * Judging what a verifier's request got back (docs/API.md "Verifiers"): the `expect` rules in
 * order, the first whose conditions all hold decides the read; none → `unavailable` naming the
 * status. And the canonical-read payload a check records.
 */

/** The value at an RFC 6901 pointer, or undefined (a missing member, an index out of range, a bad pointer). */
export function pointerAt(doc: unknown, pointer: string): unknown {
  if (doc === undefined) return undefined;
  try {
    return pointerGet(pointer, doc as Json);
  } catch {
    return undefined;
  }
}

/** The response as JSON, or undefined when it is not JSON. */
export function responseJson(body: Buffer | string): unknown {
  const text = typeof body === "string" ? body : body.toString("utf8");
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export type Judgement = {
  status: ReadStatus;
  /** The index of the rule that decided, or null. */
  rule: number | null;
  evidence: Record<string, string> | null;
  /** Why the read is `unavailable` when no rule decided (or a comparison could not be made). */
  error: string | null;
};

const evidenceText = (v: unknown): string | null =>
  v === undefined || v === null ? null : typeof v === "string" ? (v.length ? v : null) : typeof v === "number" || typeof v === "boolean" ? String(v) : JSON.stringify(v);

export function judgeResponse(def: Pick<VerifierDefinition, "expect">, ctx: TemplateContext, res: { status: number; body: Buffer | string }): Judgement {
  let json: unknown;
  let parsed = false;
  const doc = () => {
    if (!parsed) {
      json = responseJson(res.body);
      parsed = true;
    }
    return json;
  };
  for (const [i, rule] of def.expect.entries()) {
    const statuses = rule.when.status === undefined ? null : Array.isArray(rule.when.status) ? rule.when.status : [rule.when.status];
    if (statuses && !statuses.includes(res.status)) continue;
    let holds = true;
    for (const [pointer, expected] of Object.entries(rule.when.json ?? {})) {
      const actual = pointerAt(doc(), pointer);
      let want: unknown;
      try {
        want = expectedValue(expected, ctx);
      } catch (e) {
        if (e instanceof TemplateError) return { status: "unavailable", rule: i, evidence: null, error: `rule ${i + 1} cannot be judged: ${e.message}` };
        throw e;
      }
      if (actual === undefined || !jsonEqual(actual, want)) {
        holds = false;
        break;
      }
    }
    if (!holds) continue;
    let evidence: Record<string, string> | null = null;
    for (const [k, pointer] of Object.entries(rule.evidence ?? {})) {
      const v = evidenceText(pointerAt(doc(), pointer as string));
      if (v !== null) (evidence ??= {})[k] = cut(v, 4096);
    }
    return { status: rule.read, rule: i, evidence, error: null };
  }
  return { status: "unavailable", rule: null, evidence: null, error: `no expect rule matched the answer (HTTP ${res.status})` };
}

/** At most this much of a response is shown in a dry run. */
export const EXCERPT_CHARS = 2000;

/** The start of a response as text, secrets masked. */
export function responseExcerpt(body: Buffer | string, secrets: string[]): { text: string; truncated: boolean; bytes: number } {
  const buf = typeof body === "string" ? Buffer.from(body) : body;
  const text = buf.subarray(0, EXCERPT_CHARS * 4).toString("utf8").slice(0, EXCERPT_CHARS);
  return { text: maskSecrets(text, secrets), truncated: buf.length > Buffer.byteLength(text), bytes: buf.length };
}

export type ShownRequest = { method: string; url: string; headers: Record<string, string>; body?: string };

/** What a verifier's read records about how it was made (the `verifier` member of the read). */
export type VerifierReadInfo = {
  name: string;
  version: number;
  /** 1-based check of `of` in the window; null for a dry run. */
  check: number | null;
  of: number | null;
  /** The request made, secrets written {env.NAME}. */
  request: ShownRequest;
  /** The HTTP status seen, or null when no answer came (refused, timed out, network). */
  http_status: number | null;
  /** The index of the expect rule that decided, or null. */
  rule: number | null;
  /** Until this instant an `absent` read leaves the operation uncertain, "observation window open". */
  window_closes_at: string;
  /** The deciding rule takes a fingerprint from the answer: a match must show one (issue 54). */
  fingerprint_expected?: boolean;
  error?: string;
  attempts?: number;
  ms?: number;
};

/** The canonical-read payload a check records (an ordinary read in the wire format, plus `verifier`). */
export function verifierReadPayload(opts: {
  status: ReadStatus;
  observedAt: string;
  evidence: Record<string, string> | null;
  info: VerifierReadInfo;
}): Record<string, unknown> {
  const { name, version } = opts.info;
  return {
    status: opts.status,
    observed_at: opts.observedAt,
    ...(opts.evidence ? { evidence: opts.evidence } : {}),
    reader: { identity: `verifier:${name}@${version}` },
    verifier: opts.info,
  };
}

/** The window's end a verifier read carries, when it carries a valid one. */
export function readWindowClosesAt(data: unknown): string | null {
  if (!isPlainObject(data) || !isPlainObject(data.verifier)) return null;
  const at = data.verifier.window_closes_at;
  return typeof at === "string" ? at : null;
}

/** Whether a verifier read says its deciding rule expects a fingerprint. */
export function readExpectsFingerprint(data: unknown): boolean {
  return isPlainObject(data) && isPlainObject(data.verifier) && data.verifier.fingerprint_expected === true;
}

/**
 * Whether every verifier that has read an operation has made its last check of the window
 * (`check` = `of`): nothing more is scheduled to read it, so its outcome will not change unless
 * someone else sends a read or a reviewer acts. False while no verifier has read it yet. The
 * long poll (`GET /api/v1/operations/{id}?wait=`) ends then instead of waiting out its time.
 */
export function verifierChecksDone(reads: { data: unknown; sent_by?: { via?: string; name?: string } | null }[]): boolean {
  const last = new Map<string, boolean>();
  for (const r of reads) {
    if (r.sent_by?.via !== "system" || !r.sent_by.name?.startsWith("verifier:")) continue;
    if (!isPlainObject(r.data) || !isPlainObject(r.data.verifier)) continue;
    const { check, of } = r.data.verifier as { check?: unknown; of?: unknown };
    if (typeof check !== "number" || typeof of !== "number") continue;
    last.set(r.sent_by.name, (last.get(r.sent_by.name) ?? false) || check >= of);
  }
  return last.size > 0 && [...last.values()].every(Boolean);
}
