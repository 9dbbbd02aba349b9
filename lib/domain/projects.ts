import { isRole, type Role } from "./permissions";

/*
 * Projects (docs/API.md "Projects"). A project owns operations and everything derived
 * from them, its hash chains, checkpoints and export, its verifiers, webhooks, sampling rates and
 * API tokens; users, sessions and sign-in events are the instance's. Each project keeps its data
 * in a database of its own (a file beside the instance's on SQLite, a schema of the same
 * PostgreSQL database), so nothing of one can be read, joined or exported with another's, an
 * operation id is unique within its project, and a project's audit trail verifies alone. The
 * `default` project is the instance's own database: a database made before projects is that
 * project, every record where it was.
 */

/** The project every database made before projects became; its id and its slug. */
export const DEFAULT_PROJECT = "default";

/** A project id: what names its database. `default`, or lower-case letters and digits. */
export const PROJECT_ID = /^[a-z0-9]{1,32}$/;

const SLUG_CHARS = /^[a-z0-9-]*$/;

/** Slugs the URLs use for themselves (`/p/{slug}`, `/api`, `/login`, …), never a project's. */
const RESERVED = new Set(["api", "new", "login", "logout", "setup", "password", "forbidden", "settings", "projects", "admin", "static", "_next"]);

/** Why a slug cannot name a project, in a sentence; null when it can. */
export function slugProblem(slug: string): string | null {
  if (slug.length < 2 || slug.length > 40) return "a project's slug has 2 to 40 characters";
  if (!SLUG_CHARS.test(slug)) return "a project's slug has only lower-case letters, digits and hyphens";
  if (!/^[a-z]/.test(slug)) return "a project's slug must start with a letter";
  if (!/[a-z0-9]$/.test(slug)) return "a project's slug must end with a letter or digit";
  if (slug.includes("--")) return "a project's slug has no two hyphens in a row";
  if (RESERVED.has(slug)) return `"${slug}" is reserved for the server's own pages; choose another slug`;
  return null;
}

/**
 * A user's role in a project: their membership's, or admin for an instance admin (who creates
 * projects and adds members, and so could make themselves a member anyway). Null: not a member,
 * and the project does not exist for them. The instance's admins are the default project's
 * (`isInstanceAdmin`): a database made before projects keeps its admins, and they keep every
 * power they had.
 */
export function effectiveRole(input: { instanceAdmin: boolean; membership: string | null }): Role | null {
  if (input.instanceAdmin) return "admin";
  return isRole(input.membership) ? input.membership : null;
}

/** Whether a user with this role in the default project is an instance admin. */
export function isInstanceAdmin(defaultProjectRole: string | null | undefined): boolean {
  return defaultProjectRole === "admin";
}

/**
 * The database of a project, from the instance's DATABASE_URL: the instance's own for the default
 * project; otherwise, on SQLite, a file beside it (`reconcile.db` → `reconcile.project-{id}.db`),
 * and on PostgreSQL, the schema `project_{id}` of the same database.
 */
export function projectDatabaseUrl(instanceUrl: string, projectId: string): string {
  if (!PROJECT_ID.test(projectId)) throw new Error(`not a project id: ${JSON.stringify(projectId)}`);
  if (projectId === DEFAULT_PROJECT) return instanceUrl;
  const q = instanceUrl.indexOf("?");
  const base = q < 0 ? instanceUrl : instanceUrl.slice(0, q);
  const query = q < 0 ? "" : instanceUrl.slice(q);
  if (instanceUrl.startsWith("file:")) {
    const slash = base.lastIndexOf("/");
    const dot = base.lastIndexOf(".");
    const name = dot > slash && dot > "file:".length - 1 ? `${base.slice(0, dot)}.project-${projectId}${base.slice(dot)}` : `${base}.project-${projectId}`;
    return name + query;
  }
  return `${base}${query ? `${query}&` : "?"}schema=project_${projectId}`;
}

/** A page's path in a project's URLs: `/operations/x` → `/p/{slug}/operations/x`. */
export function projectPath(slug: string, path: string): string {
  if (path === "/" || path === "") return `/p/${slug}`;
  return `/p/${slug}${path.startsWith("/") ? path : `/${path}`}`;
}

/** The project and the page of a `/p/{slug}/…` path; null for any other path. */
export function unprojectedPath(path: string): { slug: string; path: string } | null {
  const m = /^\/p\/([^/?#]+)(.*)$/.exec(path);
  if (!m) return null;
  return { slug: m[1], path: m[2] === "" ? "/" : m[2] };
}

/** The pages that show one project's data (everything but sign-in, one's account, users and projects). */
const PROJECT_PAGES = ["/operations", "/review", "/trajectories", "/metrics", "/audit", "/settings/tokens", "/settings/verifiers", "/settings/webhooks", "/settings/members"];

/** Whether a path (without `/p/{slug}`) is one of a project's pages: its URL carries the project. */
export function isProjectPage(path: string): boolean {
  return path === "/" || PROJECT_PAGES.some((p) => path === p || path.startsWith(`${p}/`));
}

/**
 * A path to send someone to after an action: a project page's URL from before projects
 * (`/operations`, `/`) is put in the default project directly, not left to the proxy's redirect
 * (Next.js follows an action's redirect itself, and loses its way through a second one).
 */
export function landingPath(path: string): string {
  const bare = path.split(/[?#]/)[0];
  return unprojectedPath(bare) === null && isProjectPage(bare) ? projectPath(DEFAULT_PROJECT, path) : path;
}
