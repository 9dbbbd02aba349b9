import "server-only";
import { verifyPassword } from "@/lib/auth/passwords";
import { isRole, type Role } from "@/lib/auth/permissions";
import { reader, writeTransaction } from "./db";
import { recordSecurityEvent } from "./security-events";
import { recordSignInFailure, signInBlockedFor } from "./throttle";
import { normalizeEmail } from "./users";

export type SignInResult =
  | { ok: true; user: { id: string; email: string; role: Role } }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "throttled"; minutes: number };

/** A hash to verify against when the account does not exist, so timing does not tell. */
const DUMMY_HASH = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$8s0a0cz1wGm1lkF5pR6Sx3dHf0Ba3PpXr3pXq1GZf9c";

/**
 * Checks email + password with throttling: an account (or address) over its failure limit is
 * refused before the password is even looked at, so the right password does not help either.
 * Every outcome is a security event in the chain.
 */
export async function signInWithPassword(emailInput: string, password: string, address: string | null): Promise<SignInResult> {
  const email = normalizeEmail(emailInput);
  const blocked = await signInBlockedFor(email, address);
  if (blocked) {
    await writeTransaction((tx) =>
      recordSecurityEvent(tx, email, { type: "signin.failed", email, reason: "throttled", source: address }),
    );
    return { ok: false, reason: "throttled", minutes: blocked };
  }
  const db = await reader();
  const user = await db.user.findUnique({ where: { email } });
  const valid = await verifyPassword(user?.passwordHash ?? DUMMY_HASH, password);
  if (!user || !valid || user.disabled || !isRole(user.role)) {
    await recordSignInFailure(email, address);
    const reason = !user ? "unknown account" : user.disabled ? "account disabled" : "wrong password";
    await writeTransaction((tx) => recordSecurityEvent(tx, email, { type: "signin.failed", email, reason, source: address }));
    return { ok: false, reason: "invalid" };
  }
  await writeTransaction((tx) =>
    recordSecurityEvent(tx, email, { type: "signin.succeeded", email, method: "password", source: address }),
  );
  return { ok: true, user: { id: user.id, email: user.email, role: user.role } };
}
