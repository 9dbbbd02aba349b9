"use server";

import { landingPath } from "@/lib/domain/projects";
import { revalidatePath } from "next/cache";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { AuthError } from "next-auth";
import { knownError } from "@/lib/api/errors";
import { authorizeAction, guardedAction, sentence, type FormState } from "./guard";
import { signIn, signOut } from "@/lib/auth/auth";
import { MAX_IDENTIFIER_LENGTH } from "@/lib/crypto/identifier";
import { safeRedirectPath } from "@/lib/auth/redirect";
import { sourceAddress } from "@/lib/auth/request";
import { currentUser, pendingPasswordChange } from "@/lib/auth/session";
import { changeOwnPassword, setPasswordByAdmin } from "@/lib/store/people/account";
import { createApiToken, revokeToken } from "@/lib/store/people/api-tokens";
import { countUsers, createFirstAdmin, createUser, endAllSessions, updateUser } from "@/lib/store/people/users";

/**
 * Server actions. Each checks authentication and permission itself (the proxy only
 * redirects), and answers a form state the page shows as a clear message.
 */
export type { FormState };
const authorize = authorizeAction;
const guarded = guardedAction;

const field = (form: FormData, name: string) => {
  const v = form.get(name);
  return typeof v === "string" ? v : "";
};

export async function loginAction(_prev: FormState, form: FormData): Promise<FormState> {
  try {
    await signIn("credentials", {
      email: field(form, "email"),
      password: field(form, "password"),
      redirectTo: landingPath(safeRedirectPath(field(form, "from"))),
    });
  } catch (e) {
    if (e instanceof AuthError) {
      const code = (e as AuthError & { code?: string }).code ?? "";
      const throttled = /^throttled-(\d+)$/.exec(code);
      // React resets a form after its action: hand the email back so the field keeps it.
      const values = { email: field(form, "email").slice(0, MAX_IDENTIFIER_LENGTH) };
      if (throttled) {
        const n = Number(throttled[1]);
        return { error: `Too many attempts, try again in ${n} minute${n === 1 ? "" : "s"}.`, values };
      }
      return { error: "Wrong email or password.", values };
    }
    throw e; // the redirect on success
  }
  return null;
}

/** Single sign-on: off to the identity provider, and back to `from` (on this origin only). */
export async function ssoSignInAction(form: FormData): Promise<void> {
  await signIn("oidc", { redirectTo: landingPath(safeRedirectPath(field(form, "from"))) });
}

export async function logoutAction(): Promise<void> {
  await signOut({ redirectTo: "/login" });
}

/**
 * The one-time first-admin form: only while no user exists, and with the setup code when the
 * server printed one. Concurrent submissions create one admin (createFirstAdmin).
 */
export async function setupAction(_prev: FormState, form: FormData): Promise<FormState> {
  if ((await countUsers()) > 0) return { error: "Reconcile already has an admin. Sign in instead." };
  const password = field(form, "password");
  const values = { email: field(form, "email") };
  if (password !== field(form, "confirm")) return { error: "The two passwords differ.", values };
  try {
    await createFirstAdmin({ email: field(form, "email"), password, setupCode: field(form, "code"), source: sourceAddress(await headers()) });
  } catch (e) {
    const known = knownError(e);
    if (known) return { error: sentence(known.message), values };
    throw e;
  }
  await signIn("credentials", { email: field(form, "email"), password, redirectTo: landingPath("/") });
  return null;
}

export async function addUserAction(_prev: FormState, form: FormData): Promise<FormState> {
  const values = { email: field(form, "email"), role: field(form, "role") };
  return guarded(values, async () => {
    const { principal, source } = await authorize("users:manage");
    const user = await createUser({ email: field(form, "email"), password: field(form, "password"), role: field(form, "role"), actor: principal.email, via: "admin", source });
    revalidatePath("/settings/users");
    return { ok: `Added ${user.email} as ${user.role}.` };
  });
}

export async function updateUserAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guarded({}, async () => {
    const { principal, source } = await authorize("users:manage");
    const disabled = field(form, "disabled");
    const user = await updateUser({
      id: field(form, "id"),
      role: field(form, "role") || undefined,
      disabled: disabled === "true" ? true : disabled === "false" ? false : undefined,
      actor: principal.email,
      source,
    });
    revalidatePath("/settings/users");
    return { ok: `${user.email} is now ${user.disabled ? "disabled" : `an enabled ${user.role}`}.` };
  });
}

/** Admins end every session of a user at once ("sign out everywhere"); a security event. */
export async function signOutEverywhereAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guarded({}, async () => {
    const { principal, source } = await authorize("users:manage");
    const { email } = await endAllSessions({ id: field(form, "id"), actor: principal.email, source });
    revalidatePath("/settings/users");
    return { ok: `Every session of ${email} has ended.` };
  });
}

export async function createTokenAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guarded({ name: field(form, "name") }, async () => {
    const { principal, source } = await authorize("tokens:own");
    const scopes = form.getAll("scopes").filter((s): s is string => typeof s === "string");
    const t = await createApiToken({ email: principal.email, name: field(form, "name"), scopes, project: principal.project.id, actor: principal.email, source });
    revalidatePath("/settings/tokens");
    return { ok: `Created ${t.prefix}…${t.last4}. Copy it now: it is shown once.`, token: t.token };
  });
}

export async function revokeTokenAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guarded({}, async () => {
    const { principal, source } = await authorize("tokens:own");
    const { name } = await revokeToken({ id: field(form, "id"), ownerId: principal.userId, projectId: principal.project.id, actor: principal.email, source });
    // No revalidation: the row stays, saying it is revoked, until the page is next loaded.
    return { ok: `Revoked “${name}”: it no longer works.` };
  });
}

/** A project's admins revoke any of its tokens (they see every token's name and prefix, never its secret). */
export async function revokeAnyTokenAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guarded({}, async () => {
    const { principal, source } = await authorize("members:manage");
    const { name, owner } = await revokeToken({ id: field(form, "id"), ownerId: null, projectId: principal.project.id, actor: principal.email, source });
    return { ok: `Revoked ${owner}'s token “${name}”: it no longer works.` };
  });
}

/**
 * Anyone signed in changes their own password, knowing the current one; this is also the one
 * thing a session whose password an admin set may do (then it goes on to the overview).
 */
export async function changePasswordAction(_prev: FormState, form: FormData): Promise<FormState> {
  const pending = await pendingPasswordChange();
  const me = pending ?? (await currentUser());
  if (!me) redirect("/login");
  const next = field(form, "next");
  if (next !== field(form, "confirm")) return { error: "The two new passwords differ." };
  const result = await guarded({}, async () => {
    await changeOwnPassword({ userId: me.userId, current: field(form, "current"), next, source: sourceAddress(await headers()) });
    return { ok: "Password changed. Use the new one from now on." };
  });
  if (pending && result?.ok) redirect(landingPath("/"));
  return result;
}

/** Admins set a user's password (a reset): the user's sessions end and they must change it at their next sign-in. */
export async function setPasswordAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guarded({}, async () => {
    const { principal, source } = await authorize("users:manage");
    const { email } = await setPasswordByAdmin({ id: field(form, "id"), password: field(form, "password"), actor: principal.email, source });
    revalidatePath("/settings/users");
    return { ok: `Set a new password for ${email}; their sessions ended, and they choose their own at their next sign-in.` };
  });
}
