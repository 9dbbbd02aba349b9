import "server-only";
import { randomUUID } from "node:crypto";
import { ApiError } from "@/lib/api/errors";
import { hashPassword, MIN_PASSWORD_LENGTH } from "@/lib/auth/passwords";
import { isRole, type Role } from "@/lib/auth/permissions";
import { reader, writeTransaction } from "./db";
import { recordSecurityEvent } from "./security-events";

export type UserSummary = { id: string; email: string; role: Role; disabled: boolean; createdAt: Date };

const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Creates a user (CLI, first-run setup, admin page), recording a security event with it. */
export async function createUser(input: {
  email: string;
  password: string;
  role: string;
  actor: string | null;
  via: "cli" | "setup" | "admin" | "demo" | "sso";
  source?: string | null;
}): Promise<UserSummary> {
  const email = normalizeEmail(input.email);
  if (!EMAIL_RE.test(email)) throw new ApiError("invalid_request", "email must be an address like name@example.com");
  if (!isRole(input.role)) throw new ApiError("invalid_request", "role must be viewer, reviewer or admin");
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new ApiError("invalid_request", `password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const passwordHash = await hashPassword(input.password);
  const role: Role = input.role;
  return writeTransaction(async (tx) => {
    if (await tx.user.findUnique({ where: { email }, select: { id: true } })) {
      throw new ApiError("conflict", `a user with the email ${email} already exists`);
    }
    const now = new Date();
    const user = await tx.user.create({
      data: { id: randomUUID(), email, passwordHash, role, disabled: false, createdAt: now, updatedAt: now },
      select: { id: true, email: true, role: true, disabled: true, createdAt: true },
    });
    await recordSecurityEvent(tx, input.actor, { type: "user.created", email, role, via: input.via, source: input.source ?? null });
    return { ...user, role };
  });
}

export async function findUserByEmail(email: string) {
  const db = await reader();
  return db.user.findUnique({ where: { email: normalizeEmail(email) } });
}

export async function countUsers(): Promise<number> {
  const db = await reader();
  return db.user.count();
}
