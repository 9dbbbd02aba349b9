import "server-only";
import { randomBytes } from "node:crypto";
import { DEFAULT_PROJECT, effectiveRole, isInstanceAdmin, slugProblem } from "@/lib/domain/projects";
import { isRole, type ProjectRef, type Role } from "@/lib/domain/permissions";
import type { Tx } from "../db/database";
import { instanceReader as reader, instanceWriteTransaction as writeTransaction } from "../db/db";
import { StoreError } from "../errors";
import { recordSecurityEvent } from "../chain/security-events";
import { lockInstanceChain } from "../chain/instance-chain";
import { forgetTokens } from "./token-cache";
import { enqueueJobs } from "../work/jobs";
import { asSql } from "../db/sql";
import { normalizeEmail } from "./users";

/**
 * Projects and their members, kept in the instance's database (lib/domain/projects.ts says
 * what a project is). Every change is a security event of the instance's chain.
 */

export type Project = ProjectRef & { createdAt: string; retentionDays: number | null; ready: boolean };
export type Member = { userId: string; email: string; role: Role; instanceAdmin: boolean; disabled: boolean; since: string | null };

type Row = { id: string; slug: string; name: string; createdAt: string; retentionDays: number | null; readyAt: string | null };
const project = (r: Row): Project => ({ id: r.id, slug: r.slug, name: r.name, createdAt: r.createdAt, retentionDays: r.retentionDays, ready: r.readyAt !== null });

const NAME_MAX = 100;

/** A project by its slug (ready or not), or null. */
export async function projectBySlug(slug: string): Promise<Project | null> {
  if (slugProblem(slug) && slug !== DEFAULT_PROJECT) return null;
  const db = await reader();
  const row = await db.project.findUnique({ where: { slug } });
  return row ? project(row) : null;
}

/** A project by its id, or null. */
export async function projectById(id: string): Promise<Project | null> {
  const db = await reader();
  const row = await db.project.findUnique({ where: { id } });
  return row ? project(row) : null;
}

/** Every project, oldest first. */
export async function listProjects(): Promise<Project[]> {
  const db = await reader();
  return (await db.project.findMany({ orderBy: [{ createdAt: "asc" }, { slug: "asc" }] })).map(project);
}

/**
 * The ready projects a user may open, with their role in each, oldest first: every project for
 * an instance admin, their memberships' otherwise.
 */
export async function projectsOf(userId: string): Promise<(Project & { role: Role })[]> {
  const db = await reader();
  const [rows, memberships] = await Promise.all([
    db.project.findMany({ where: { readyAt: { not: null } }, orderBy: [{ createdAt: "asc" }, { slug: "asc" }] }),
    db.projectMember.findMany({ where: { userId } }),
  ]);
  const roleBy = new Map(memberships.map((m) => [m.projectId, m.role]));
  const instanceAdmin = isInstanceAdmin(roleBy.get(DEFAULT_PROJECT));
  const out: (Project & { role: Role })[] = [];
  for (const r of rows) {
    const role = effectiveRole({ instanceAdmin, membership: roleBy.get(r.id) ?? null });
    if (role) out.push({ ...project(r), role });
  }
  return out;
}

/**
 * A user's standing in a project: their role there (null: none, and the project does not exist
 * for them) and whether they are an instance admin. Read with `db` (a transaction, or a reader).
 */
export async function standingWith(db: Pick<Tx, "projectMember">, userId: string, projectId: string): Promise<{ role: Role | null; instanceAdmin: boolean }> {
  const rows = await db.projectMember.findMany({ where: { userId, projectId: { in: [projectId, DEFAULT_PROJECT] } }, select: { projectId: true, role: true } });
  const instanceAdmin = isInstanceAdmin(rows.find((r) => r.projectId === DEFAULT_PROJECT)?.role);
  return { role: effectiveRole({ instanceAdmin, membership: rows.find((r) => r.projectId === projectId)?.role ?? null }), instanceAdmin };
}

/** `standingWith` on the instance's database. */
export async function standingIn(userId: string, projectId: string): Promise<{ role: Role | null; instanceAdmin: boolean }> {
  return standingWith(await reader(), userId, projectId);
}

/** A new project's id: 12 lower-case letters and digits (what names its database). */
function newProjectId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return [...randomBytes(12)].map((b) => alphabet[b % 36]).join("");
}

export type NewProject = { slug: string; name: string; retentionDays?: number | null; actor: string; source?: string | null };

/** Checks a new project's fields; throws invalid_input with a sentence naming the field. */
function checked(input: NewProject): { slug: string; name: string; retentionDays: number | null } {
  const slug = input.slug.trim();
  const problem = slugProblem(slug);
  if (problem) throw new StoreError("invalid_input", `slug: ${problem}`);
  return { slug, name: checkedName(input.name), retentionDays: checkedDays(input.retentionDays ?? null) };
}

function checkedName(raw: string): string {
  const name = raw.trim();
  if (!name || name.length > NAME_MAX || /[\u0000-\u001f\u007f]/.test(name)) throw new StoreError("invalid_input", `name: a project's name has 1 to ${NAME_MAX} characters and no control characters`);
  return name;
}

function checkedDays(days: number | null): number | null {
  if (days !== null && (!Number.isInteger(days) || days < 1 || days > 36_500)) throw new StoreError("invalid_input", "retention_days: a whole number of days from 1 to 36,500, or null for the instance's default");
  return days;
}

export type ProjectChange = { projectId: string; name?: string; retentionDays?: number | null; actor: string; source?: string | null };

/**
 * Renames a project or changes its retention (null: the instance's RECONCILE_RETENTION_DAYS,
 * keep everything when that is unset), recording what changed as a security event. A change to
 * nothing records nothing. Its slug, in every URL, stays.
 */
export async function changeProject(input: ProjectChange): Promise<Project> {
  const name = input.name === undefined ? undefined : checkedName(input.name);
  const days = input.retentionDays === undefined ? undefined : checkedDays(input.retentionDays);
  return writeTransaction(async (tx) => {
    await lockInstanceChain(tx);
    const before = await tx.project.findUnique({ where: { id: input.projectId } });
    if (!before) throw new StoreError("not_found", "no such project");
    const renamed = name !== undefined && name !== before.name;
    const retimed = days !== undefined && days !== before.retentionDays;
    if (!renamed && !retimed) return project(before);
    const row = await tx.project.update({ where: { id: before.id }, data: { ...(renamed ? { name } : {}), ...(retimed ? { retentionDays: days } : {}) } });
    await recordSecurityEvent(tx, input.actor, {
      type: "project.changed",
      project: row.slug,
      ...(renamed ? { name: { from: before.name, to: row.name } } : {}),
      ...(retimed ? { retention_days: { from: before.retentionDays, to: row.retentionDays } } : {}),
      source: input.source ?? null,
    });
    return project(row);
  });
}

/**
 * Records a new project, not yet ready: its database is made and migrated next (by the caller
 * on the command line, by the `project.prepare` job on a server), then `markProjectReady`.
 * The creator, an instance admin, is admin in it like in every project. Refuses a slug in use.
 */
export async function createProject(input: NewProject, andThen?: (tx: Tx, p: Project) => Promise<void>): Promise<Project> {
  const fields = checked(input);
  return writeTransaction(async (tx) => {
    await lockInstanceChain(tx);
    if (await tx.project.findUnique({ where: { slug: fields.slug }, select: { id: true } })) throw new StoreError("conflict", `slug: a project with the slug ${fields.slug} already exists`);
    const row = await tx.project.create({ data: { id: newProjectId(), ...fields, createdAt: new Date().toISOString(), createdBy: input.actor, readyAt: null } });
    await recordSecurityEvent(tx, input.actor, { type: "project.created", project: row.slug, name: row.name, retention_days: row.retentionDays, source: input.source ?? null });
    const created = project(row);
    await andThen?.(tx, created);
    return created;
  });
}

/** Marks a project's database made and migrated: from now on it can be used. */
export async function markProjectReady(id: string): Promise<void> {
  await writeTransaction(async (tx) => {
    await tx.project.updateMany({ where: { id, readyAt: null }, data: { readyAt: new Date().toISOString() } });
  });
}

/** A project's members (with the instance admins, who are admin in it whether members or not), by email. */
export async function listMembers(projectId: string): Promise<Member[]> {
  const db = await reader();
  const [members, admins] = await Promise.all([
    db.projectMember.findMany({ where: { projectId }, include: { user: { select: { email: true, disabled: true } } } }),
    db.projectMember.findMany({ where: { projectId: DEFAULT_PROJECT, role: "admin" }, include: { user: { select: { email: true, disabled: true } } } }),
  ]);
  const adminIds = new Set(admins.map((a) => a.userId));
  const out = new Map<string, Member>();
  for (const m of members) {
    const instanceAdmin = adminIds.has(m.userId);
    const role = effectiveRole({ instanceAdmin, membership: m.role });
    if (role) out.set(m.userId, { userId: m.userId, email: m.user.email, role, instanceAdmin, disabled: m.user.disabled, since: m.createdAt });
  }
  for (const a of admins) if (!out.has(a.userId)) out.set(a.userId, { userId: a.userId, email: a.user.email, role: "admin", instanceAdmin: true, disabled: a.user.disabled, since: null });
  return [...out.values()].sort((a, b) => a.email.localeCompare(b.email));
}

/** Adds a user (by email) to a project with a role, or changes their role there. */
export async function setMember(input: { projectId: string; email: string; role: string; actor: string; source?: string | null }): Promise<Member> {
  if (!isRole(input.role)) throw new StoreError("invalid_input", "role: must be viewer, reviewer or admin");
  const role = input.role;
  const email = normalizeEmail(input.email);
  const result = await writeTransaction(async (tx) => {
    await lockInstanceChain(tx);
    const p = await tx.project.findUnique({ where: { id: input.projectId } });
    if (!p) throw new StoreError("not_found", "no such project");
    const user = await tx.user.findUnique({ where: { email } });
    if (!user) throw new StoreError("not_found", `email: no user has the email ${email}; an instance admin creates users first`);
    const before = await tx.projectMember.findUnique({ where: { projectId_userId: { projectId: p.id, userId: user.id } } });
    const now = new Date().toISOString();
    if (before) await tx.projectMember.update({ where: { projectId_userId: { projectId: p.id, userId: user.id } }, data: { role } });
    else await tx.projectMember.create({ data: { projectId: p.id, userId: user.id, role, createdAt: now } });
    if (before?.role !== role) {
      await recordSecurityEvent(tx, input.actor, { type: "member.set", project: p.slug, email, from: before?.role ?? null, to: role, source: input.source ?? null });
    }
    const { instanceAdmin } = await standingWith(tx, user.id, p.id);
    return { userId: user.id, email, role: effectiveRole({ instanceAdmin, membership: role }) ?? role, instanceAdmin, disabled: user.disabled, since: before?.createdAt ?? now };
  });
  forgetTokens();
  return result;
}

/** Takes a user out of a project (their tokens for it stop working with their role). */
export async function removeMember(input: { projectId: string; userId: string; actor: string; source?: string | null }): Promise<{ email: string }> {
  const result = await writeTransaction(async (tx) => {
    await lockInstanceChain(tx);
    const p = await tx.project.findUnique({ where: { id: input.projectId } });
    const member = p ? await tx.projectMember.findUnique({ where: { projectId_userId: { projectId: p.id, userId: input.userId } }, include: { user: { select: { email: true } } } }) : null;
    if (!p || !member) throw new StoreError("not_found", "no such member");
    await tx.projectMember.delete({ where: { projectId_userId: { projectId: p.id, userId: input.userId } } });
    await recordSecurityEvent(tx, input.actor, { type: "member.removed", project: p.slug, email: member.user.email, role: member.role, source: input.source ?? null });
    return { email: member.user.email };
  });
  forgetTokens();
  return result;
}

/** The job that makes and migrates a project's database on a server (lib/cli/project-jobs.ts). */
export const PROJECT_PREPARE_JOB = "project.prepare";

/** Records a new project and, in the same transaction, the job that prepares its database. */
export function createProjectWithJob(input: NewProject): Promise<Project> {
  return createProject(input, (tx, p) => enqueueJobs(asSql(tx), [{ kind: PROJECT_PREPARE_JOB, key: `${PROJECT_PREPARE_JOB}:${p.id}`, payload: { id: p.id }, dueAt: Date.now() }]));
}
