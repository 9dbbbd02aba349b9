import { z } from "zod";
import { DEFAULT_PROJECT } from "./projects";
import { isOwnConfiguration, placeholders, SECRET_NAME, TemplateError, type SecretSource } from "./verifier-template";

/**
 * Which of the server's environment variables a verifier may send, and from which project: only
 * those the instance's operator names in RECONCILE_VERIFIER_ENV (an allowlist; unset names none).
 * Whoever may write a verifier chooses where its request goes, so a denylist of the server's own
 * configuration was not enough: any other variable (the archive's cloud credentials, say) could be
 * sent to a host the writer lists. And a project's own admin is such a writer: an instance
 * credential is the instance's, so a bare name serves only the default project (whose admins are
 * the instance's admins); `NAME@alpha+billing` grants it to those projects too (name `default` to
 * keep it there), `NAME@*` to every project. A project's admin keeps its own credentials as the
 * project's stored secrets (`{secret.NAME}`). The grant is checked when a definition is saved or
 * dry-run (a refusal naming each variable) and again whenever a request is filled in (a variable
 * taken off the list, or off a project, is never read again, even for a verifier saved before).
 * The server's own configuration stays refused even if listed.
 */

export const SECRET_ALLOWLIST_SETTING = "RECONCILE_VERIFIER_ENV";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SLUG = /^[a-z][a-z0-9-]{0,38}[a-z0-9]$/;
/** The default project's id is its slug. */
const DEFAULT_SLUG = DEFAULT_PROJECT;

/** One variable the list names, and the projects (by slug) whose verifiers may send it. */
export type SecretGrant = { name: string; projects: "*" | string[] };

/** The entries RECONCILE_VERIFIER_ENV lists (commas or spaces between), and those it may not. */
export function parseSecretAllowlist(text: string | undefined): { grants: SecretGrant[]; names: string[]; refused: { name: string; why: string }[] } {
  const grants: SecretGrant[] = [];
  const refused: { name: string; why: string }[] = [];
  for (const entry of (text ?? "").split(/[\s,]+/)) {
    if (!entry) continue;
    const at = entry.indexOf("@");
    const name = at < 0 ? entry : entry.slice(0, at);
    const scope = at < 0 ? DEFAULT_SLUG : entry.slice(at + 1);
    if (!NAME.test(name)) refused.push({ name: entry, why: "not an environment variable's name (letters, digits and _, not starting with a digit)" });
    else if (isOwnConfiguration(name)) refused.push({ name, why: "the server's own configuration is never sent to another host" });
    else if (scope !== "*" && !scope.split("+").every((s) => SLUG.test(s)))
      refused.push({ name: entry, why: "after @ come the projects' slugs joined by + (NAME@alpha+billing), or * for every project" });
    else {
      const projects = scope === "*" ? "*" : scope.split("+");
      const earlier = grants.find((g) => g.name === name);
      if (!earlier) grants.push({ name, projects });
      else if (earlier.projects !== "*") earlier.projects = projects === "*" ? "*" : [...new Set([...earlier.projects, ...projects])];
    }
  }
  return { grants, names: grants.map((g) => g.name), refused };
}

/** The variables the verifiers of one project (by slug) may send. */
export function grantedTo(grants: readonly SecretGrant[], project: string): string[] {
  return grants.filter((g) => g.projects === "*" || g.projects.includes(project)).map((g) => g.name);
}

/** Whose verifiers a sentence speaks of: the default project's are "verifiers", as before projects. */
const whose = (project: string) => (project === DEFAULT_SLUG ? "verifiers" : `project ${project}'s verifiers`);

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

/** One problem per place a definition names a variable the project may not send (none: it may be saved). */
export function secretAllowlistProblems(def: Request, allowed: readonly string[], project = DEFAULT_SLUG): { path: (string | number)[]; message: string }[] {
  const own = project === DEFAULT_SLUG ? "" : "; keep this project's credentials as its own secrets ({secret.NAME})";
  const offer = allowed.length
    ? `this server lets ${whose(project)} use only the environment variables ${SECRET_ALLOWLIST_SETTING} ${project === DEFAULT_SLUG ? "names" : "grants it"} (${allowed.join(", ")})${own}`
    : `this server lets ${whose(project)} use no environment variables (${SECRET_ALLOWLIST_SETTING} ${project === DEFAULT_SLUG ? "names none" : "grants it none"})${own}`;
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

/**
 * A secret source that reads only the variables allowed to the project (any other is refused
 * before it is read); stored secrets pass through.
 */
export function allowlistedSecrets(allowed: readonly string[], source: SecretSource, project = DEFAULT_SLUG): SecretSource {
  const names = new Set(allowed);
  return (name, kind = "env") => {
    if (kind === "secret") return source(name, kind);
    if (!names.has(name) || isOwnConfiguration(name)) throw new TemplateError(`the environment variable ${name} is not one this server lets ${whose(project)} use (${SECRET_ALLOWLIST_SETTING}); nothing was sent`);
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
