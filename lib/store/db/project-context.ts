import { AsyncLocalStorage } from "node:async_hooks";
import { DEFAULT_PROJECT, PROJECT_ID } from "@/lib/domain/projects";

/**
 * Which project's database the store reads and writes (lib/domain/projects.ts): each project
 * keeps its data in a database of its own, and every store call made inside `inProject(id, …)`
 * goes to that one. Outside any, the store works on the default project's database, which is
 * also the instance's (users, tokens, projects): the command line, the first-run page and
 * sign-in work there as before.
 *
 * A request that names a project (a token's, or a page's `/p/{slug}`) runs its work inside
 * `inProject`; the production server marks every request (`requestRequiresProject`), and then a
 * store call outside any project is an error rather than a quiet read of the default project's
 * data: a route that forgot to choose a project fails loudly in the tests instead of showing
 * one project another's operations. Instance-wide work (sign-in, users, tokens, projects) says
 * so with `inInstance`.
 *
 * On globalThis: route handlers run in Next.js's bundle, which has its own copies of modules,
 * and must see the context the server opened (as lib/observability/context.ts).
 */
type ProjectScope = { projectId: string; slug: string | null; instance?: true };

const root = globalThis as unknown as { __reconcileProject?: AsyncLocalStorage<ProjectScope>; __reconcileProjectRequired?: AsyncLocalStorage<true> };
const storage = (root.__reconcileProject ??= new AsyncLocalStorage<ProjectScope>());
const required = (root.__reconcileProjectRequired ??= new AsyncLocalStorage<true>());

/**
 * Runs `fn` with the store working on a project's database: given by id, or by id and slug (the
 * slug goes into the links its webhook events and verdicts carry, `currentProjectSlug`).
 */
export function inProject<T>(project: string | { id: string; slug: string }, fn: () => T): T {
  const [projectId, slug] = typeof project === "string" ? [project, project === DEFAULT_PROJECT ? DEFAULT_PROJECT : null] : [project.id, project.slug];
  if (!PROJECT_ID.test(projectId)) throw new Error(`not a project id: ${JSON.stringify(projectId)}`);
  return storage.run({ projectId, slug }, fn);
}

/** Runs `fn` on the instance's database (users, tokens, projects, sign-in events). */
export function inInstance<T>(fn: () => T): T {
  return storage.run({ projectId: DEFAULT_PROJECT, slug: DEFAULT_PROJECT, instance: true }, fn);
}

/**
 * True inside `inInstance` (not inside `inProject`, even the default project's, which shares the
 * instance's database): the security events written here go to the instance's own chain.
 */
export function workingOnInstance(): boolean {
  return storage.getStore()?.instance === true;
}

/** The current project's slug when the caller said it (null: only its id is known here). */
export function currentProjectSlug(): string | null {
  const scope = storage.getStore();
  return scope ? scope.slug : DEFAULT_PROJECT;
}

/** Runs `fn` (a request's handling) so that a store call outside any project is refused. */
export function requestRequiresProject<T>(fn: () => T): T {
  return required.run(true, fn);
}

/** The project the store is working on now. */
export function currentProjectId(): string {
  const scope = storage.getStore();
  if (scope) return scope.projectId;
  if (required.getStore()) throw new Error("no project chosen for this store call: the request must run it inProject (or inInstance)");
  return DEFAULT_PROJECT;
}

const kept = ((globalThis as unknown as { __reconcilePerProject?: Map<string, Map<string, unknown>> }).__reconcilePerProject ??= new Map());

/**
 * State a module keeps for the project it works on (a batch waiting to commit, a timer): one
 * `make()` per project, so that nothing of one project's is ever written in another's database.
 * `name` keeps it apart from other modules' (and across Next.js's copies of a module).
 */
export function perProject<T>(name: string, make: () => T): () => T {
  return () => {
    let byProject = kept.get(name);
    if (!byProject) kept.set(name, (byProject = new Map()));
    const id = currentProjectId();
    if (!byProject.has(id)) byProject.set(id, make());
    return byProject.get(id) as T;
  };
}

/** What names the current project in archive paths and checkpoints: its slug (its id where the slug is not known here). */
export function currentProjectKey(): string {
  return currentProjectSlug() ?? currentProjectId();
}

/**
 * `fn`, bound to the project the caller works in now: for work that runs later, outside the
 * caller's async context (a response stream's reads, pulled by the server after the handler
 * returned).
 */
export function boundToProject<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  const scope = storage.getStore();
  if (!scope) return fn;
  return (...args) => storage.run(scope, () => fn(...args));
}
