import "server-only";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { ApiError } from "@/lib/api/errors";
import { can } from "@/lib/domain/permissions";
import { sourceAddress } from "@/lib/auth/request";
import { currentPrincipal, currentUser } from "@/lib/auth/session";
import { inProject } from "@/lib/store/db/project-context";
import { recordRefusal } from "@/lib/store/chain/refusals";

/**
 * The review actions' own check: signed in (else to /login), with the review permission (else
 * the refusal is recorded as a security event and a forbidden ApiError is thrown).
 */
export async function requireReviewer() {
  const me = await currentPrincipal();
  if (!me && (await currentUser())) throw new ApiError("not_found", "no such project");
  if (!me) redirect("/login");
  if (!can(me, "operations:correct")) {
    const h = await headers();
    await inProject(me.project, () => recordRefusal(me.email, { permission: "operations:correct", method: "ACTION", path: h.get("referer") ?? "", source: sourceAddress(h) }));
    throw new ApiError("forbidden", "only reviewers and admins work the review queue");
  }
  return me;
}
