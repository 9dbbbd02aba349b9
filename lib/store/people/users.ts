import "server-only";
import { randomUUID } from "node:crypto";
import { hashPassword } from "@/lib/crypto/passwords";
import { passwordProblem } from "@/lib/domain/password-policy";
import { isRole, type Role } from "@/lib/domain/permissions";
import { DEFAULT_PROJECT } from "@/lib/domain/projects";
import { lockInstanceChain } from "../chain/instance-chain";
import type { Tx } from "../db/database";
import { instanceReader as reader, instanceWriteTransaction as writeTransaction } from "../db/db";
import { StoreError } from "../errors";
import { recordSecurityEvent } from "../chain/security-events";
import { SETUP_CODE_ROW, setupCodeMatches } from "./setup-code";
import { forgetTokens } from "./token-cache";

/** A user, with their role in one project (the default project's unless said: null when not a member). */
export type UserSummary = { id: string; email: string; role: Role | null; disabled: boolean; createdAt: Date };

const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

type NewUser = {
  email: string;
  password: string;
  /** Their role in `project`. */
  role: string;
  /** The id of the project they join (default: the default project, whose admins are the instance's). */
  project?: string;
  actor: string | null;
  via: "cli" | "setup" | "admin" | "demo" | "sso";
  source?: string | null;
};

/** Validates and hashes outside any transaction (argon2 takes a while). */
async function prepareUser(input: NewUser): Promise<{ email: string; role: Role; passwordHash: string }> {
  const email = normalizeEmail(input.email);
  if (!EMAIL_RE.test(email) || email.length > 254 || email.indexOf("@") > 64) {
    throw new StoreError("invalid_input", "email must be an address like name@example.com (at most 64 characters before the @, 254 in all)");
  }
  if (!isRole(input.role)) throw new StoreError("invalid_input", "role must be viewer, reviewer or admin");
  const problem = passwordProblem(input.password, { email });
  if (problem) throw new StoreError("invalid_input", problem);
  return { email, role: input.role, passwordHash: await hashPassword(input.password) };
}

async function insertUser(tx: Tx, input: NewUser, prepared: { email: string; role: Role; passwordHash: string }): Promise<UserSummary> {
  const { email, role, passwordHash } = prepared;
  if (await tx.user.findUnique({ where: { email }, select: { id: true } })) {
    throw new StoreError("conflict", `a user with the email ${email} already exists`);
  }
  const projectId = input.project ?? DEFAULT_PROJECT;
  const project = await tx.project.findUnique({ where: { id: projectId }, select: { slug: true } });
  if (!project) throw new StoreError("not_found", "project: no such project");
  const now = new Date();
  const user = await tx.user.create({
    // A password an admin chose for someone else is theirs to replace at first sign-in.
    data: { id: randomUUID(), email, passwordHash, disabled: false, mustChangePassword: input.via === "admin", createdAt: now, updatedAt: now },
    select: { id: true, email: true, disabled: true, createdAt: true },
  });
  await tx.projectMember.create({ data: { projectId, userId: user.id, role, createdAt: now.toISOString() } });
  await recordSecurityEvent(tx, input.actor, {
    type: "user.created",
    email,
    role,
    ...(projectId !== DEFAULT_PROJECT ? { project: project.slug } : {}),
    via: input.via,
    source: input.source ?? null,
  });
  return { ...user, role };
}

/** Creates a user (CLI, admin page, demo), recording a security event with it. */
export async function createUser(input: NewUser): Promise<UserSummary> {
  const prepared = await prepareUser(input);
  return writeTransaction(async (tx) => {
    await lockInstanceChain(tx);
    return insertUser(tx, input, prepared);
  });
}

/**
 * The first-run admin (/setup): only while no user exists, and with the setup code when the
 * server made one (lib/store/people/setup-code.ts). The chain lock is taken before the count, so
 * concurrent submissions (on any instance) queue, and all but the first find a user and are
 * refused. The setup code is deleted with the admin's creation.
 */
export async function createFirstAdmin(input: { email: string; password: string; setupCode: string; source?: string | null }): Promise<UserSummary> {
  const user: NewUser = { email: input.email, password: input.password, role: "admin", actor: null, via: "setup", source: input.source };
  const prepared = await prepareUser(user);
  return writeTransaction(async (tx) => {
    await lockInstanceChain(tx);
    if ((await tx.user.count()) > 0) throw new StoreError("conflict", "Reconcile already has an admin: sign in instead");
    const code = await tx.setupCode.findUnique({ where: { id: SETUP_CODE_ROW } });
    if (code && !setupCodeMatches(code.code, input.setupCode)) {
      throw new StoreError("forbidden", "the setup code is not right: it is printed in the server's log when it starts");
    }
    const created = await insertUser(tx, user, prepared);
    await tx.setupCode.deleteMany({});
    return created;
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

/** Every user, oldest first, with their role in one project (default: the default project). */
export async function listUsers(projectId: string = DEFAULT_PROJECT): Promise<UserSummary[]> {
  const db = await reader();
  const [rows, members] = await Promise.all([
    db.user.findMany({ orderBy: { createdAt: "asc" }, select: { id: true, email: true, disabled: true, createdAt: true } }),
    db.projectMember.findMany({ where: { projectId }, select: { userId: true, role: true } }),
  ]);
  const roleOf = new Map(members.map((m) => [m.userId, m.role]));
  return rows.map((r) => {
    const role = roleOf.get(r.id);
    return { ...r, role: isRole(role) ? role : null };
  });
}

/**
 * The user behind a session, re-read on every request: a disabled user is cut off at once, and
 * `sessionVersion` tells whether the session was ended (sign-out, "sign out everywhere").
 */
export async function activeUser(id: string): Promise<{ id: string; email: string; sessionVersion: number; mustChangePassword: boolean } | null> {
  const db = await reader();
  const u = await db.user.findUnique({ where: { id }, select: { id: true, email: true, disabled: true, sessionVersion: true, mustChangePassword: true } });
  if (!u || u.disabled) return null;
  return { id: u.id, email: u.email, sessionVersion: u.sessionVersion, mustChangePassword: u.mustChangePassword };
}

/**
 * Changes a user's role in the default project (whose admins are the instance's) or their
 * disabled flag. The last enabled admin can be neither demoted nor disabled: the chain lock is
 * taken before admins are counted, so two admins demoting each other at once (on PostgreSQL, on
 * two instances) are decided one after the other, and the second finds the first's change and
 * is refused.
 */
export async function updateUser(input: {
  id: string;
  role?: string;
  disabled?: boolean;
  actor: string;
  source?: string | null;
}): Promise<UserSummary> {
  if (input.role !== undefined && !isRole(input.role)) throw new StoreError("invalid_input", "role must be viewer, reviewer or admin");
  const key = (userId: string) => ({ projectId_userId: { projectId: DEFAULT_PROJECT, userId } });
  const result = await writeTransaction(async (tx) => {
    await lockInstanceChain(tx);
    const user = await tx.user.findUnique({ where: { id: input.id } });
    if (!user) throw new StoreError("not_found", "no such user");
    const member = await tx.projectMember.findUnique({ where: key(user.id) });
    const role = isRole(member?.role) ? member.role : null;
    const losesAdmin = role === "admin" && !user.disabled && ((input.role && input.role !== "admin") || input.disabled === true);
    if (losesAdmin) {
      const admins = await tx.projectMember.count({ where: { projectId: DEFAULT_PROJECT, role: "admin", user: { disabled: false } } });
      if (admins <= 1) throw new StoreError("conflict", "this is the last admin: make another admin first");
    }
    if (input.role && input.role !== role) {
      if (member) await tx.projectMember.update({ where: key(user.id), data: { role: input.role } });
      else await tx.projectMember.create({ data: { projectId: DEFAULT_PROJECT, userId: user.id, role: input.role, createdAt: new Date().toISOString() } });
    }
    const updated = await tx.user.update({
      where: { id: user.id },
      data: { ...(input.disabled !== undefined ? { disabled: input.disabled } : {}), updatedAt: new Date() },
      select: { id: true, email: true, disabled: true, createdAt: true },
    });
    const source = input.source ?? null;
    if (input.role && input.role !== role) {
      await recordSecurityEvent(tx, input.actor, { type: "user.role_changed", email: user.email, from: role ?? "none", to: input.role, source });
    }
    if (input.disabled !== undefined && input.disabled !== user.disabled) {
      await recordSecurityEvent(tx, input.actor, { type: input.disabled ? "user.disabled" : "user.enabled", email: user.email, source });
    }
    return { ...updated, role: (input.role as Role | undefined) ?? role };
  });
  forgetTokens();
  return result;
}

/**
 * Ends every session of a user at once, on every instance ("sign out everywhere"): the session
 * version every session carries no longer matches. Their API tokens are not affected.
 */
export async function endAllSessions(input: { id: string; actor: string; source?: string | null }): Promise<{ email: string }> {
  return writeTransaction(async (tx) => {
    // Every change to people takes the trail's lock first, so two never wait on each other's rows in opposite orders.
    await lockInstanceChain(tx);
    const user = await tx.user.findUnique({ where: { id: input.id }, select: { email: true } });
    if (!user) throw new StoreError("not_found", "no such user");
    await tx.user.update({ where: { id: input.id }, data: { sessionVersion: { increment: 1 }, updatedAt: new Date() } });
    await recordSecurityEvent(tx, input.actor, { type: "sessions.ended", email: user.email, source: input.source ?? null });
    return { email: user.email };
  });
}
