import "server-only";
import { randomUUID } from "node:crypto";
import { isRole, type Role } from "@/lib/auth/permissions";
import { writeTransaction } from "./db";
import { recordSecurityEvent } from "./security-events";
import { normalizeEmail } from "./users";

export async function recordSignOut(email: string): Promise<void> {
  await writeTransaction((tx) => recordSecurityEvent(tx, email, { type: "signout", email }));
}

/**
 * The local user for a single sign-on identity, matched by email. A first SSO sign-in creates
 * the user with AUTH_OIDC_DEFAULT_ROLE (viewer unless set). A disabled user is refused (null).
 */
export async function userForSso(emailInput: string): Promise<{ id: string; role: Role } | null> {
  const email = normalizeEmail(emailInput);
  const role = isRole(process.env.AUTH_OIDC_DEFAULT_ROLE) ? process.env.AUTH_OIDC_DEFAULT_ROLE : "viewer";
  return writeTransaction(async (tx) => {
    const existing = await tx.user.findUnique({ where: { email } });
    if (existing) return existing.disabled || !isRole(existing.role) ? null : { id: existing.id, role: existing.role };
    const now = new Date();
    const user = await tx.user.create({ data: { id: randomUUID(), email, passwordHash: null, role, createdAt: now, updatedAt: now } });
    await recordSecurityEvent(tx, email, { type: "user.created", email, role, via: "sso" });
    await recordSecurityEvent(tx, email, { type: "signin.succeeded", email, method: "oidc" });
    return { id: user.id, role };
  });
}
