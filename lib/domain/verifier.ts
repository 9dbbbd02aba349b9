import { z } from "zod";
import { readStatuses } from "./wire";
import { isSecretPlaceholder, placeholders, templateProblem } from "./verifier-template";

/**
 * A verifier (docs/API.md "Verifiers"): a declarative postcondition check that Reconcile performs
 * itself after a receipt of its tool, again and again over an observation window. Pure: the
 * definition's shape and rules, durations and the schedule of checks. Templating lives in
 * verifier-template.ts, judging a response in verifier-check.ts.
 */

/** Names appear in URLs and in the sender `verifier:<name>@<version>`. */
export const verifierNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "must be 1–63 characters: lowercase letters, digits, . _ - (starting with a letter or digit)");

const DURATION = /^(\d{1,8})(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
/** The longest observation window: a day. */
export const MAX_WINDOW_MS = 24 * 3_600_000;

/** "200ms", "5s", "2m", "1h" as milliseconds; null when it is none of these. */
export function durationMs(text: string): number | null {
  const m = DURATION.exec(text);
  if (!m) return null;
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

const duration = z.string().refine((t) => {
  const ms = durationMs(t);
  return ms !== null && ms <= MAX_WINDOW_MS;
}, 'must be a duration such as "200ms", "5s", "2m" or "1h", at most 24h');

/** Headers whose values are credentials: they must come from the environment, never be written into the definition. */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie)$|token|secret|key|auth|session|password/i;
/** Headers the HTTP client sets itself. */
const FORBIDDEN_HEADER = /^(host|content-length|transfer-encoding|connection|upgrade|te|trailer|keep-alive|expect)$/i;

const pointer = z.string().max(1024).regex(/^(\/[^/]*)*$/, 'must be a JSON pointer (RFC 6901), such as "/data/id", or "" for the whole document');

export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;

const statusCode = z.number().int().min(100).max(599);

export const expectRuleSchema = z.strictObject({
  when: z.strictObject({
    status: z.union([statusCode, z.array(statusCode).min(1).max(50, "at most 50 statuses")]).optional(),
    /** JSON pointer into the response → the value it must equal (a template, or any JSON value). */
    json: z
      .record(z.string().max(1024), z.unknown())
      .refine((o) => Object.keys(o).length <= 32, "at most 32 comparisons per rule")
      .optional(),
  }),
  read: z.enum(readStatuses),
  /** Evidence taken from the response: each a JSON pointer. */
  evidence: z
    .strictObject({ object_id: pointer.optional(), fingerprint: pointer.optional(), url: pointer.optional() })
    .optional(),
});

export const verifierDefinitionSchema = z
  .strictObject({
    name: verifierNameSchema,
    tool: z.string().min(1, "must not be empty").max(200),
    /** A disabled verifier schedules no new checks (checks already scheduled still run). */
    enabled: z.boolean().optional(),
    request: z.strictObject({
      method: z.enum(HTTP_METHODS),
      url: z.string().min(1).max(2048),
      headers: z
        .record(z.string().min(1).max(128).regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be an HTTP header name"), z.string().max(4096))
        .refine((h) => Object.keys(h).length <= 32, "at most 32 headers")
        .optional(),
      body: z.string().max(65_536).optional(),
    }),
    expect: z.array(expectRuleSchema).min(1, "needs at least one rule").max(32, "at most 32 rules"),
    window: z.strictObject({
      checks_at: z.array(duration).min(1, "needs at least one check").max(20, "at most 20 checks"),
      pending_until: duration,
    }),
    allow_hosts: z
      .array(z.string().min(1).max(253).regex(/^[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/, "must be a lowercase host name (no scheme, port or path)"))
      .min(1, "name at least the request's host")
      .max(16, "at most 16 hosts"),
  })
  .superRefine((d, ctx) => {
    const problem = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path, message });
    // Templates: known roots only; the host written out and allowed.
    const texts: [(string | number)[], string][] = [[["request", "url"], d.request.url]];
    for (const [k, v] of Object.entries(d.request.headers ?? {})) texts.push([["request", "headers", k], v]);
    if (d.request.body !== undefined) texts.push([["request", "body"], d.request.body]);
    d.expect.forEach((r, i) => {
      for (const [p, v] of Object.entries(r.when.json ?? {})) if (typeof v === "string") texts.push([["expect", i, "when", "json", p], v]);
    });
    for (const [path, text] of texts) {
      const p = templateProblem(text);
      if (p) problem(path, p);
    }
    const host = urlHostProblem(d.request.url, d.allow_hosts);
    if (host) problem(["request", "url"], host);
    for (const [k, v] of Object.entries(d.request.headers ?? {})) {
      if (FORBIDDEN_HEADER.test(k)) problem(["request", "headers", k], `${k} is set by the HTTP client, not by a verifier`);
      else if (SECRET_HEADER.test(k) && v.length && !placeholders(v).some(isSecretPlaceholder)) {
        problem(["request", "headers", k], `${k} carries a credential: write it as {env.NAME} (read from the server's environment) or {secret.NAME} (stored encrypted), not as text`);
      }
    }
    d.expect.forEach((r, i) => {
      for (const k of Object.keys(r.when.json ?? {})) if (!pointer.safeParse(k).success) problem(["expect", i, "when", "json", k], 'must be a JSON pointer (RFC 6901), such as "/data/id", or "" for the whole document');
      for (const p of placeholders(JSON.stringify(r.when.json ?? {}))) {
        if (isSecretPlaceholder(p)) problem(["expect", i, "when", "json"], `{${p}}: secrets may be sent, never compared (a comparison would reveal them)`);
      }
    });
    // The window: every check inside it.
    const until = durationMs(d.window.pending_until);
    d.window.checks_at.forEach((c, i) => {
      const ms = durationMs(c);
      if (until !== null && ms !== null && ms > until) problem(["window", "checks_at", i], `${c} is after pending_until (${d.window.pending_until}): every check falls inside the window`);
    });
  });

export type VerifierDefinition = z.infer<typeof verifierDefinitionSchema>;
export type ExpectRule = z.infer<typeof expectRuleSchema>;

/** A stored version: the definition plus what the store adds. */
export type VerifierVersion = {
  name: string;
  version: number;
  tool: string;
  enabled: boolean;
  definition: VerifierDefinition;
  created_at: string;
  created_by: string;
  seq: number;
};

/** Whether the rule that decided a read takes a fingerprint from the answer (its matches must then show one). */
export function ruleExpectsFingerprint(def: Pick<VerifierDefinition, "expect">, rule: number | null): boolean {
  return rule !== null && def.expect[rule]?.read === "match" && def.expect[rule].evidence?.fingerprint !== undefined;
}

export type FingerprintRuleProblem = { path: string; message: string };

/**
 * The `expect` rules that read `match` without a fingerprint pointer (issue 54). For a tool whose
 * intents carry fingerprints such a match shows nothing to compare, so every operation it checks
 * stays uncertain: refused at save, each rule named. Whether the tool's intents carry one is known
 * only from those recorded so far; when none has yet, the same rules are answered as warnings.
 */
export function fingerprintRuleProblems(def: Pick<VerifierDefinition, "expect" | "tool">, intentsCarryFingerprints: boolean): { refuse: boolean; problems: FingerprintRuleProblem[] } {
  const problems: FingerprintRuleProblem[] = [];
  def.expect.forEach((r, i) => {
    if (r.read !== "match" || r.evidence?.fingerprint !== undefined) return;
    const path = `expect[${i}].evidence.fingerprint`;
    problems.push({
      path,
      message: intentsCarryFingerprints
        ? `rule ${i + 1} reads "match" without a fingerprint pointer, but intents of ${def.tool} carry fingerprints: its matches would show nothing to compare and leave each operation uncertain; take the fingerprint from the answer (evidence.fingerprint: a JSON pointer)`
        : `rule ${i + 1} reads "match" without a fingerprint pointer; no intent of ${def.tool} recorded so far carries a fingerprint, so this cannot be known yet: if they do, its matches will leave each operation uncertain ("the read found the object but did not show its content to compare")`,
    });
  });
  return { refuse: intentsCarryFingerprints && problems.length > 0, problems };
}

/** Who sends a verifier's reads: the sender name on its stage records. */
export const verifierSender = (name: string, version: number) => `verifier:${name}@${version}`;

/** Whether a sender name is a verifier's (`verifier:<name>@<version>`). */
export function isVerifierSender(name: string | null | undefined): boolean {
  return typeof name === "string" && /^verifier:[a-z0-9][a-z0-9._-]{0,62}@\d+$/.test(name);
}

/**
 * The request URL's host must be written out (a value from the operation could otherwise send
 * the request anywhere) and be one of `allow_hosts`; the scheme http or https.
 */
export function urlHostProblem(url: string, allowHosts: string[]): string | null {
  const scheme = /^(https?):\/\//i.exec(url);
  if (!scheme) return "must start with https:// (or http:// where the server allows it)";
  const rest = url.slice(scheme[0].length);
  const end = rest.search(/[/?#]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  if (/[{}]/.test(authority)) return "the host must be written out: a template in the host could send the request anywhere";
  if (authority.includes("@")) return "the URL must not carry credentials (user:password@): use a header with {env.NAME}";
  let parsed: URL;
  try {
    parsed = new URL(url.replace(/\{[^}]*\}/g, "x"));
  } catch {
    return "is not a URL";
  }
  const host = parsed.hostname.toLowerCase();
  if (!allowHosts.includes(host)) return `its host ${host} is not in allow_hosts (${allowHosts.join(", ") || "empty"})`;
  return null;
}

/** The window's offsets in milliseconds: each check, and the window's end (the last check). */
export function windowOffsets(window: VerifierDefinition["window"]): { checks: number[]; closesAfter: number } {
  const closesAfter = durationMs(window.pending_until)!;
  const checks = [...new Set([...window.checks_at.map((c) => durationMs(c)!), closesAfter])].sort((a, b) => a - b);
  return { checks, closesAfter };
}

export type ScheduledCheck = {
  /** 1-based place in the window's checks. */
  check: number;
  /** Of this many. */
  of: number;
  dueAt: number;
  /** The last check: at the window's end. */
  final: boolean;
};

/**
 * When to check, counted from the receipt's own time (the write happened then): one check per
 * offset and one at the window's end. Checks whose time has passed (a receipt sent late) are
 * folded into one check now, except the window's end, which is never folded away: the read at
 * or after it is what closes the window (the classification is computed when a record is written,
 * so the window can only close by a record).
 */
export function checkSchedule(window: VerifierDefinition["window"], receiptAtMs: number, nowMs: number): { checks: ScheduledCheck[]; closesAt: number } {
  const { checks, closesAfter } = windowOffsets(window);
  const closesAt = receiptAtMs + closesAfter;
  const of = checks.length;
  const out: ScheduledCheck[] = [];
  checks.forEach((offset, i) => {
    const due = receiptAtMs + offset;
    const final = i === of - 1;
    if (due <= nowMs && !final) {
      // Only the latest of the past checks is kept, at "now".
      const nextDue = receiptAtMs + checks[i + 1];
      if (nextDue <= nowMs) return;
      out.push({ check: i + 1, of, dueAt: nowMs, final });
      return;
    }
    out.push({ check: i + 1, of, dueAt: Math.max(due, nowMs), final });
  });
  return { checks: out, closesAt };
}
