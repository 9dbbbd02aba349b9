import "server-only";
import { can, isInstancePermission, refusal, type Permission, type Principal } from "@/lib/domain/permissions";
import { inInstance } from "@/lib/store/db/project-context";
import { sourceAddress } from "@/lib/auth/request";
import { authenticateToken } from "@/lib/store/people/api-tokens";
import { recordRefusal } from "@/lib/store/chain/refusals";
import { ApiError } from "./errors";

/**
 * The checks every API request passes, free of Next.js so that the ingest fast path
 * (lib/api/ingest-node.ts) runs exactly the same ones as apiRoute.
 */

/** Sending records: the ingest permission, or the verify permission for canonical reads alone. */
export const INGEST_PERMISSIONS = ["receipts:ingest", "receipts:verify"] as const satisfies Permission[];

/**
 * Throws 403 (and records the refusal in the audit trail) unless the principal holds the
 * permission (or, given several, any one of them).
 */
export async function authorize(principal: Principal, permissions: Permission | readonly Permission[], request: { method: string; path: string; headers: Headers }) {
  const list: readonly Permission[] = typeof permissions === "string" ? [permissions] : permissions;
  if (list.some((p) => can(principal, p))) return;
  const permission = list[0];
  // Folded per principal, permission and window (lib/store/chain/refusals.ts): a flood adds a bounded number of records.
  const record = () => recordRefusal(principal.email, { permission, method: request.method, path: request.path, source: sourceAddress(request.headers) });
  // A refusal of the instance's permissions (users, projects, its trail, /metrics) is the
  // instance's event, in its own trail; a project's, in that project's chain.
  await (isInstancePermission(permission) ? inInstance(record) : record());
  throw new ApiError("forbidden", refusal(principal, permission), { permission });
}

/** The principal of an Authorization header's bearer token, or null. */
export async function bearerPrincipal(header: string): Promise<Principal | null> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? authenticateToken(m[1]) : null;
}
