import { isPlainObject } from "./json";
import { mergeEnvelopes } from "./stages";

/**
 * A verifier's templates (docs/API.md "Verifiers"): `{intent.params.text}`,
 * `{receipt.receipt_id}`, `{operation_id}`, envelope fields (`{tool.name}`, `{envelope.X}`) take
 * values from the operation's recorded stages; `{env.NAME}` takes a secret from the server's
 * environment, and only those RECONCILE_VERIFIER_ENV names (verifier-secrets.ts). Secrets are never stored and never shown: every rendering has a `shown` twin in
 * which each secret is still written `{env.NAME}`, and texts that may echo one (a response, an
 * error) go through `maskSecrets`.
 */

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)\}/g;

/** Where a template may take values from. */
const ROOTS = new Set(["intent", "receipt", "operation_id", "env", "secret", "envelope", "tool", "agent", "trajectory_id", "claimed_outcome", "idempotency", "depends_on"]);

/** A stored secret's name (`{secret.NAME}`): what the secrets API and the template both accept. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Whether a placeholder is a secret, from the environment or stored: sent, never shown or compared. */
export const isSecretPlaceholder = (p: string) => p.startsWith("env.") || p.startsWith("secret.");

/** The server's own configuration is never a verifier's secret (it would leave for another host). */
const OWN_CONFIGURATION = /^(AUTH_|NEXTAUTH_|DATABASE_URL$|.*_DATABASE_URL$|RECONCILE_|PG[A-Z]*$|NPM_|npm_)/;
export const isOwnConfiguration = (name: string) => OWN_CONFIGURATION.test(name);

/** What masks a secret wherever one might show. */
export const MASK = "•••";

/** The placeholders of a text, without braces, in order. */
export function placeholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]);
}

/** Why a template cannot be used (an unknown root, a bad secret name), or null. */
export function templateProblem(text: string): string | null {
  for (const p of placeholders(text)) {
    const [root, ...rest] = p.split(".");
    if (!ROOTS.has(root)) return `{${p}}: a template takes values from intent, receipt, operation_id, the envelope (tool, agent, trajectory_id, claimed_outcome, idempotency, depends_on, envelope.*), env or secret`;
    if (root === "secret" && (rest.length !== 1 || !SECRET_NAME.test(rest[0]))) return `{${p}}: a stored secret is {secret.NAME}, one name (letters, digits and _, at most 64)`;
    if (root === "env") {
      if (rest.length !== 1 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(rest[0])) return `{${p}}: a secret is {env.NAME}, one environment variable`;
      if (OWN_CONFIGURATION.test(rest[0])) return `{${p}}: the server's own configuration (${rest[0]}) is never sent to another host`;
    }
    if (root === "operation_id" && rest.length) return `{${p}}: operation_id has no fields`;
    if (root === "envelope" && rest.length === 0) return `{${p}}: name a field, such as {envelope.trajectory_id}`;
  }
  return null;
}

/** What templates read: the operation's id, its first intent and receipt, its merged envelope. */
export type TemplateContext = { operation_id: string; intent: unknown; receipt: unknown; envelope: Record<string, unknown> };

export function operationContext(operationId: string, stages: { stage: string; seq: number; data: unknown; envelope: Record<string, unknown> | null }[]): TemplateContext {
  const ordered = [...stages].sort((a, b) => a.seq - b.seq);
  return {
    operation_id: operationId,
    intent: ordered.find((s) => s.stage === "intent")?.data,
    receipt: ordered.find((s) => s.stage === "receipt")?.data,
    envelope: mergeEnvelopes(ordered.map((s) => s.envelope)),
  };
}

/** A template that cannot be filled from this operation (a value it does not have, a secret not set). */
export class TemplateError extends Error {}

function lookup(ctx: TemplateContext, path: string): unknown {
  const [root, ...rest] = path.split(".");
  let v: unknown =
    root === "operation_id" ? ctx.operation_id : root === "intent" ? ctx.intent : root === "receipt" ? ctx.receipt : root === "envelope" ? ctx.envelope : ctx.envelope[root];
  for (const seg of rest) {
    if (Array.isArray(v) && /^\d+$/.test(seg)) v = v[Number(seg)];
    else if (isPlainObject(v) && Object.hasOwn(v, seg)) v = v[seg];
    else return undefined;
  }
  return v;
}

function asText(v: unknown, path: string): string {
  if (v === undefined || v === null) throw new TemplateError(`the operation has no value for {${path}}`);
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

/** Reads a secret: an environment variable (`{env.NAME}`), or a stored one (`{secret.NAME}`). */
export type SecretSource = (name: string, kind?: "env" | "secret") => string | undefined;
export const processEnv: SecretSource = (name, kind) => (kind === "secret" ? undefined : process.env[name]);

export type Rendered = { value: string; shown: string; secrets: string[] };

/**
 * Fills a template. In a URL (`encode`), values are percent-encoded, so that no value from an
 * operation can change the URL's structure. `shown` is the same text with every secret still
 * written `{env.NAME}`.
 */
export function render(text: string, ctx: TemplateContext, secrets: SecretSource, opts: { encode?: boolean } = {}): Rendered {
  const used: string[] = [];
  const enc = (s: string) => (opts.encode ? encodeURIComponent(s) : s);
  let shown = "";
  let value = "";
  let last = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    const path = m[1];
    const literal = text.slice(last, m.index);
    value += literal;
    shown += literal;
    last = m.index + m[0].length;
    if (isSecretPlaceholder(path)) {
      const stored = path.startsWith("secret.");
      const name = path.slice(stored ? 7 : 4);
      const secret = secrets(name, stored ? "secret" : "env");
      if (secret === undefined || secret === "") {
        throw new TemplateError(stored ? `no secret named ${name} is stored on this server ({${path}}; an admin adds it under Verifiers, Secrets)` : `the environment variable ${name} is not set on this server ({${path}})`);
      }
      used.push(secret);
      value += enc(secret);
      shown += m[0];
    } else {
      const filled = enc(asText(lookup(ctx, path), path));
      value += filled;
      shown += filled;
    }
  }
  value += text.slice(last);
  shown += text.slice(last);
  return { value, shown, secrets: used };
}

/**
 * An expected value of an `expect` comparison: a text that is exactly one placeholder keeps the
 * value's own JSON type (`"{intent.params.count}"` compares as the number); other texts are
 * filled as text; any other JSON value is compared as it is. Secrets are refused at definition.
 */
export function expectedValue(expected: unknown, ctx: TemplateContext): unknown {
  if (typeof expected !== "string") return expected;
  const whole = /^\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)\}$/.exec(expected);
  if (whole) {
    const v = lookup(ctx, whole[1]);
    if (v === undefined || v === null) throw new TemplateError(`the operation has no value for {${whole[1]}} to compare with`);
    return v;
  }
  return render(expected, ctx, () => undefined).value;
}

/** Every occurrence of each secret replaced by the mask (a response or an error may echo one). */
export function maskSecrets(text: string, secrets: string[]): string {
  let out = text;
  for (const s of [...new Set(secrets)].sort((a, b) => b.length - a.length)) {
    if (!s) continue;
    out = out.split(s).join(MASK);
    const encoded = encodeURIComponent(s);
    if (encoded !== s) out = out.split(encoded).join(MASK);
  }
  return out;
}

/** The request a verifier sends, and the same request as it may be shown and recorded. */
export type RenderedRequest = {
  send: { method: string; url: string; headers: Record<string, string>; body?: string };
  shown: { method: string; url: string; headers: Record<string, string>; body?: string };
  secrets: string[];
};

export function renderRequest(
  request: { method: string; url: string; headers?: Record<string, string>; body?: string },
  ctx: TemplateContext,
  secrets: SecretSource,
): RenderedRequest {
  const used: string[] = [];
  const url = render(request.url, ctx, secrets, { encode: true });
  used.push(...url.secrets);
  const headers: Record<string, string> = {};
  const shownHeaders: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.headers ?? {})) {
    const r = render(v, ctx, secrets);
    if (/[\r\n\0]/.test(r.value)) throw new TemplateError(`the header ${k} would contain a line break`);
    headers[k] = r.value;
    shownHeaders[k] = r.shown;
    used.push(...r.secrets);
  }
  const body = request.body === undefined ? undefined : render(request.body, ctx, secrets);
  if (body) used.push(...body.secrets);
  return {
    send: { method: request.method, url: url.value, headers, ...(body ? { body: body.value } : {}) },
    shown: { method: request.method, url: url.shown, headers: shownHeaders, ...(body ? { body: body.shown } : {}) },
    secrets: used,
  };
}
