import "server-only";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { ApiError, knownError } from "@/lib/api/errors";
import { can, isInstancePermission, type Permission } from "@/lib/domain/permissions";
import { sourceAddress } from "@/lib/auth/request";
import { currentPrincipal, currentUser } from "@/lib/auth/session";
import { inInstance, inProject } from "@/lib/store/db/project-context";
import { recordRefusal } from "@/lib/store/chain/refusals";

/**
 * What every form server action starts with: the signed-in principal, refused (and the refusal
 * recorded as a security event) unless it has the permission; and known errors turned into the
 * form's message. Not a "use server" module: nothing here can be called from a browser.
 */
/** `warnings`: the action succeeded, and these are worth a look (a filter naming a tool no operation has used). */
export type FormState = { error?: string; ok?: string; warnings?: string[]; token?: string; values?: Record<string, string> } | null;

/**
 * The principal in the project the action's page is in (its `/p/{slug}` path, proxy.ts); an
 * action's reads and writes of that project's data run in `inProject(principal.project, …)`.
 */
export async function authorizeAction(permission: Permission) {
  const principal = await currentPrincipal();
  if (!principal && (await currentUser())) throw new ApiError("not_found", "no such project");
  if (!principal) redirect("/login");
  if (!can(principal, permission)) {
    const h = await headers();
    // Folded per principal, permission and window (lib/store/chain/refusals.ts).
    const record = () => recordRefusal(principal.email, { permission, method: "ACTION", path: h.get("referer") ?? "", source: sourceAddress(h) });
    // The instance's permissions are refused in its own trail; a project's, in that project's chain.
    await (isInstancePermission(permission) ? inInstance(record) : inProject(principal.project, record));
    throw new ApiError("forbidden", "you may not do this");
  }
  return { principal, source: sourceAddress(await headers()) };
}

/**
 * A refusal as a sentence: capitalised and closed, except that one opening with the name of a
 * field it refuses (`url is required`) keeps the field's name as the API writes it.
 */
export function sentence(message: string, details?: unknown): string {
  const fieldLed = Array.isArray(details) && details.some((d) => typeof d?.path === "string" && d.path && message.startsWith(`${d.path} `));
  return (fieldLed ? message : message.charAt(0).toUpperCase() + message.slice(1)) + (/[.!?]$/.test(message) ? "" : ".");
}

export async function guardedAction(values: Record<string, string>, fn: () => Promise<FormState>): Promise<FormState> {
  try {
    return await fn();
  } catch (e) {
    const known = knownError(e);
    if (known) return { error: sentence(known.message, known.details), values };
    throw e;
  }
}

/**
 * An action on the project its page is in: authorized, then run in that project
 * (lib/store/db/project-context.ts), with known errors turned into the form's message.
 */
export function guardedProjectAction(
  permission: Permission,
  values: Record<string, string>,
  fn: (ctx: Awaited<ReturnType<typeof authorizeAction>>) => Promise<FormState>,
): Promise<FormState> {
  return guardedAction(values, async () => {
    const ctx = await authorizeAction(permission);
    return inProject(ctx.principal.project, () => fn(ctx));
  });
}
