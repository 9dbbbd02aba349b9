import "server-only";
import { can, refusal, type Permission, type Principal } from "@/lib/domain/permissions";
import { sourceAddress } from "@/lib/auth/request";
import { authenticateToken } from "@/lib/store/people/api-tokens";
import { writeTransaction } from "@/lib/store/db/db";
import { recordSecurityEvent } from "@/lib/store/chain/security-events";
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
  await writeTransaction((tx) =>
    recordSecurityEvent(tx, principal.email, {
      type: "authorization.refused",
      permission,
      method: request.method,
      path: request.path,
      source: sourceAddress(request.headers),
    }),
  );
  throw new ApiError("forbidden", refusal(principal, permission), { permission });
}

/** The principal of an Authorization header's bearer token, or null. */
export async function bearerPrincipal(header: string): Promise<Principal | null> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? authenticateToken(m[1]) : null;
}
