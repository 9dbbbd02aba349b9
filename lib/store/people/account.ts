import "server-only";
import { hashPassword, verifyPassword } from "@/lib/crypto/passwords";
import { passwordProblem } from "@/lib/domain/password-policy";
import { instanceReader as reader, instanceWriteTransaction as writeTransaction } from "../db/db";
import { StoreError } from "../errors";
import { recordSecurityEvent } from "../chain/security-events";
import { lockInstanceChain } from "../chain/instance-chain";

/**
 * Passwords after an account exists: people change their own (knowing the current one), and an
 * admin can set someone's (a reset), which that person must replace at their next sign-in.
 */

/** A user changes their own password. Clears "must change". Their sessions stay signed in. */
export async function changeOwnPassword(input: { userId: string; current: string; next: string; source?: string | null }): Promise<void> {
  const db = await reader();
  const user = await db.user.findUnique({ where: { id: input.userId }, select: { email: true, passwordHash: true, disabled: true } });
  if (!user || user.disabled) throw new StoreError("not_found", "no such user");
  if (!user.passwordHash) throw new StoreError("invalid_input", "this account signs in with single sign-on and has no password here");
  if (!(await verifyPassword(user.passwordHash, input.current))) throw new StoreError("invalid_input", "the current password is not right");
  const problem = passwordProblem(input.next, { email: user.email, current: input.current });
  if (problem) throw new StoreError("invalid_input", problem);
  const passwordHash = await hashPassword(input.next);
  await writeTransaction(async (tx) => {
    // Every change to people takes the trail's lock first, so two never wait on each other's rows in opposite orders.
    await lockInstanceChain(tx);
    // Only if the password is still the one just checked: two changes at once, one wins.
    const changed = await tx.user.updateMany({ where: { id: input.userId, passwordHash: user.passwordHash }, data: { passwordHash, mustChangePassword: false, updatedAt: new Date() } });
    if (changed.count !== 1) throw new StoreError("conflict", "the password was changed meanwhile: sign in again");
    await recordSecurityEvent(tx, user.email, { type: "password.changed", email: user.email, source: input.source ?? null });
  });
}

/** An admin sets a user's password: every session of theirs ends, and they must change it at their next sign-in. */
export async function setPasswordByAdmin(input: { id: string; password: string; actor: string; source?: string | null }): Promise<{ email: string }> {
  const db = await reader();
  const user = await db.user.findUnique({ where: { id: input.id }, select: { email: true } });
  if (!user) throw new StoreError("not_found", "no such user");
  const problem = passwordProblem(input.password, { email: user.email });
  if (problem) throw new StoreError("invalid_input", problem);
  const passwordHash = await hashPassword(input.password);
  await writeTransaction(async (tx) => {
    // Every change to people takes the trail's lock first, so two never wait on each other's rows in opposite orders.
    await lockInstanceChain(tx);
    await tx.user.update({ where: { id: input.id }, data: { passwordHash, mustChangePassword: true, sessionVersion: { increment: 1 }, updatedAt: new Date() } });
    await recordSecurityEvent(tx, input.actor, { type: "password.reset", email: user.email, source: input.source ?? null });
  });
  return { email: user.email };
}
