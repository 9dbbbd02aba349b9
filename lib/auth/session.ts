import "server-only";
import { cache } from "react";
import { redirect } from "next/navigation";
import { auth } from "./auth";
import { can, type Permission, type Principal } from "./permissions";
import { activeUser } from "@/lib/store/users";

type SessionPrincipal = Extract<Principal, { kind: "session" }>;

/**
 * The signed-in person for this request, or null. The session cookie only says who; the role
 * and whether the account is still enabled are read from the database on every request, so a
 * demotion or a disabled account takes effect at once.
 */
export const currentPrincipal = cache(async (): Promise<SessionPrincipal | null> => {
  const session = await auth();
  const id = session?.user?.id;
  if (!id) return null;
  const user = await activeUser(id);
  return user ? { kind: "session", userId: user.id, email: user.email, role: user.role } : null;
});

/** For pages and server actions: the principal, or a redirect to sign in / a refusal. */
export async function requirePage(permission?: Permission, from?: string): Promise<SessionPrincipal> {
  const principal = await currentPrincipal();
  if (!principal) redirect(from ? `/login?from=${encodeURIComponent(from)}` : "/login");
  if (permission && !can(principal, permission)) redirect("/forbidden");
  return principal;
}
