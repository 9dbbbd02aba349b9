import { z } from "zod";
import { isOwnConfiguration, placeholders, SECRET_NAME, TemplateError, type SecretSource } from "./verifier-template";

/**
 * Which of the server's environment variables a verifier may send: only those the instance's
 * operator names in RECONCILE_VERIFIER_ENV (an allowlist; unset names none). Whoever may write a
 * verifier chooses where its request goes, so a denylist of the server's own configuration was
 * not enough: any other variable (the archive's cloud credentials, say) could be sent to a host
 * the writer lists. The allowlist is checked when a definition is saved or dry-run (a refusal
 * naming each variable) and again whenever a request is filled in (a variable taken off the list
 * is never read again, even for a verifier saved before). The server's own configuration stays
 * refused even if listed.
 */

export const SECRET_ALLOWLIST_SETTING = "RECONCILE_VERIFIER_ENV";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The names RECONCILE_VERIFIER_ENV lists (commas or spaces between), and those it may not. */
export function parseSecretAllowlist(text: string | undefined): { names: string[]; refused: { name: string; why: string }[] } {
  const names: string[] = [];
  const refused: { name: string; why: string }[] = [];
  for (const name of (text ?? "").split(/[\s,]+/)) {
    if (!name || names.includes(name)) continue;
    if (!NAME.test(name)) refused.push({ name, why: "not an environment variable's name (letters, digits and _, not starting with a digit)" });
    else if (isOwnConfiguration(name)) refused.push({ name, why: "the server's own configuration is never sent to another host" });
    else names.push(name);
  }
  return { names, refused };
}

type Request = { request: { url: string; headers?: Record<string, string>; body?: string } };

function requestTexts(def: Request): [(string | number)[], string][] {
  const texts: [(string | number)[], string][] = [[["request", "url"], def.request.url]];
  for (const [k, v] of Object.entries(def.request.headers ?? {})) texts.push([["request", "headers", k], v]);
  if (def.request.body !== undefined) texts.push([["request", "body"], def.request.body]);
  return texts;
}

/** The stored secrets (`{secret.NAME}`) a definition's request is filled with, each once. */
export function storedSecretNames(def: Request): string[] {
  const names = new Set<string>();
  for (const [, text] of requestTexts(def)) for (const p of placeholders(text)) if (p.startsWith("secret.")) names.add(p.slice(7));
  return [...names];
}

/** Every `{env.NAME}` a definition's request is filled with, and where it is written. */
export function definitionSecrets(def: Request): { path: (string | number)[]; name: string }[] {
  const out: { path: (string | number)[]; name: string }[] = [];
  for (const [path, text] of requestTexts(def)) {
    for (const p of placeholders(text)) if (p.startsWith("env.")) out.push({ path, name: p.slice(4) });
  }
  return out;
}

/** One problem per place a definition names a variable the allowlist lacks (none: it may be saved). */
export function secretAllowlistProblems(def: Request, allowed: readonly string[]): { path: (string | number)[]; message: string }[] {
  const offer = allowed.length
    ? `this server lets verifiers use only the environment variables ${SECRET_ALLOWLIST_SETTING} names (${allowed.join(", ")})`
    : `this server lets verifiers use no environment variables (${SECRET_ALLOWLIST_SETTING} names none)`;
  const seen = new Set<string>();
  const problems: { path: (string | number)[]; message: string }[] = [];
  for (const { path, name } of definitionSecrets(def)) {
    const where = `${path.join(".")}\0${name}`;
    if (allowed.includes(name) || seen.has(where)) continue;
    seen.add(where);
    problems.push({ path, message: `{env.${name}}: ${offer}` });
  }
  return problems;
}

/** A secret source that reads only the allowed environment variables (any other is refused before it is read); stored secrets pass through. */
export function allowlistedSecrets(allowed: readonly string[], source: SecretSource): SecretSource {
  const names = new Set(allowed);
  return (name, kind = "env") => {
    if (kind === "secret") return source(name, kind);
    if (!names.has(name) || isOwnConfiguration(name)) throw new TemplateError(`the environment variable ${name} is not one this server lets verifiers use (${SECRET_ALLOWLIST_SETTING}); nothing was sent`);
    return source(name, kind);
  };
}

/** A stored secret's value, as `PUT /api/v1/verifier-secrets/{name}` takes it: one line of text. */
export const MAX_SECRET_CHARS = 8192;
/** Shorter, and masking it (every place it appears in an answer becomes •••) would tell it. */
export const MIN_SECRET_CHARS = 8;
export const verifierSecretBodySchema = z.strictObject({
  value: z
    .string()
    .min(MIN_SECRET_CHARS, `must have at least ${MIN_SECRET_CHARS} characters (a shorter one would show wherever answers are masked)`)
    .max(MAX_SECRET_CHARS)
    // It is sent in headers and URLs: printable ASCII only (a line break would split a header, and
    // a header carries no other characters), without spaces at either end (a header trims them).
    .regex(/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/, "must be one line of printable ASCII (what an HTTP header can carry), without spaces at either end"),
});

/** Why a stored secret's name cannot be used, or null. */
export function secretNameProblem(name: string): string | null {
  return SECRET_NAME.test(name) ? null : "a secret's name is letters, digits and _ (at most 64), not starting with a digit";
}
