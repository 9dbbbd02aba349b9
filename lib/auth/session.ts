import "server-only";
import { cache } from "react";
import { headers } from "next/headers";
import { notFound, redirect } from "next/navigation";
import { auth } from "./auth";
import { can, type Permission, type Principal } from "@/lib/domain/permissions";
import { safeRedirectPath } from "./redirect";
import { activeUser } from "@/lib/store/people/users";
import { projectBySlug, projectsOf, standingIn } from "@/lib/store/people/projects";
import { DEFAULT_PROJECT } from "@/lib/domain/projects";
import { PROJECT_HEADER } from "./project-header";

type SessionPrincipal = Extract<Principal, { kind: "session" }>;

/**
 * The signed-in person for this request, or null. The session cookie only says who; the role,
 * whether the account is still enabled, and whether the session was ended (its session version
 * against the user's: sign-out and "sign out everywhere" raise it) are read from the database on
 * every request, so each takes effect at once, on every instance.
 */
const sessionUser = cache(async () => {
  const session = await auth();
  const id = session?.user?.id;
  if (!id) return null;
  const user = await activeUser(id);
  const version = (session.user as { sessionVersion?: unknown }).sessionVersion;
  if (!user || user.sessionVersion !== version) return null;
  return user;
});

/**
 * A user whose password an admin set must choose their own first: until then the session is
 * no principal at all (every page, action and API call treats it as signed out), and only
 * /password, which asks for the new password, accepts it (through pendingPasswordChange).
 */
export const currentUser = cache(async (): Promise<{ userId: string; email: string } | null> => {
  const user = await sessionUser();
  if (!user || user.mustChangePassword) return null;
  return { userId: user.id, email: user.email };
});

/**
 * The signed-in person in the project this request is about: the one the proxy found in a
 * `/p/{slug}/…` path (PROJECT_HEADER), else the default project. Null when nobody is signed in,
 * and when the project does not exist for them (not a member, or no such project: the two look
 * the same).
 */
export const currentPrincipal = cache(async (): Promise<SessionPrincipal | null> => {
  const user = await currentUser();
  if (!user) return null;
  return principalIn(user, (await headers()).get(PROJECT_HEADER) ?? DEFAULT_PROJECT);
});

/** A signed-in user's principal in the project with this slug, or null when it does not exist for them. */
export async function principalIn(user: { userId: string; email: string }, slug: string): Promise<SessionPrincipal | null> {
  const project = await projectBySlug(slug);
  if (!project?.ready) return null;
  const { role, instanceAdmin } = await standingIn(user.userId, project.id);
  if (!role) return null;
  return { kind: "session", userId: user.userId, email: user.email, role, instanceAdmin, project: { id: project.id, slug: project.slug, name: project.name } };
}

/** The signed-in user who must change their password before anything else, or null. */
export async function pendingPasswordChange(): Promise<{ userId: string; email: string } | null> {
  const user = await sessionUser();
  return user?.mustChangePassword ? { userId: user.id, email: user.email } : null;
}

/** Where a session that must change its password is sent. */
export const PASSWORD_CHANGE_PATH = "/password";

/**
 * For pages and server actions: the principal in the request's project, or a redirect to sign
 * in, a 404 when the project does not exist for them, or a refusal.
 */
export async function requirePage(permission?: Permission, from?: string): Promise<SessionPrincipal> {
  const principal = await currentPrincipal();
  const back = from ? safeRedirectPath(from) : "/";
  if (!principal && (await pendingPasswordChange())) redirect(PASSWORD_CHANGE_PATH);
  const user = principal ? null : await currentUser();
  if (user) {
    // Someone in no role in the default project, sent there by an old URL or "/": to their first project.
    if (((await headers()).get(PROJECT_HEADER) ?? DEFAULT_PROJECT) === DEFAULT_PROJECT) {
      const first = (await projectsOf(user.userId))[0];
      if (first) redirect(`/p/${first.slug}`);
    }
    notFound();
  }
  if (!principal) redirect(back !== "/" ? `/login?from=${encodeURIComponent(back)}` : "/login");
  if (permission && !can(principal, permission)) redirect("/forbidden");
  return principal;
}
