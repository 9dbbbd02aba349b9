import "server-only";
import { z } from "zod";
import { isPlainObject } from "@/lib/domain/json";
import { ROLES } from "@/lib/domain/permissions";
import { effectiveRetention } from "@/lib/domain/retention";
import { changeProject, createProjectWithJob, listMembers, listProjects, projectById, type Member, type NewProject, type Project, type ProjectChange } from "@/lib/store/people/projects";
import { retentionSettings } from "@/lib/retention/config";
import { scheduleRetention } from "@/lib/retention/jobs";
import { readJsonBody } from "./body";
import { ApiError, validated } from "./errors";

/** A project or member body is a few short fields: 16 KiB bounds any. */
const MAX_BODY_BYTES = 16 * 1024;

const projectBody = z.strictObject({
  slug: z.string().max(100),
  name: z.string().max(200).optional(),
  retention_days: z.number().int().min(1).max(36_500).nullable().optional(),
});

const projectChangeBody = z.strictObject({
  name: z.string().max(200).optional(),
  retention_days: z.number().int().min(1).max(36_500).nullable().optional(),
});

const memberBody = z.strictObject({
  email: z.string().max(320),
  role: z.enum(ROLES),
});

async function body(req: Request): Promise<Record<string, unknown>> {
  const raw = await readJsonBody(req, MAX_BODY_BYTES);
  if (!isPlainObject(raw)) throw new ApiError("invalid_request", "send a JSON object");
  return raw;
}

export const projectJson = (p: Project) => ({ slug: p.slug, name: p.name, created_at: p.createdAt, retention_days: p.retentionDays, ready: p.ready, url: `/p/${p.slug}` });

export const memberJson = (m: Member) => ({ email: m.email, role: m.role, instance_admin: m.instanceAdmin, disabled: m.disabled, since: m.since });

export async function projectsList() {
  return { items: (await listProjects()).map(projectJson) };
}

/**
 * Records a project and the job that prepares its database, then waits (at most 15 s) for the
 * server's worker to make it: the answer says whether it is ready yet (the API, the Projects page).
 */
export async function createProjectAndWait(input: NewProject): Promise<Project> {
  const created = await createProjectWithJob(input);
  const until = Date.now() + 15_000;
  let now: Project | null = created;
  while (now && !now.ready && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    now = await projectById(created.id);
  }
  return now ?? created;
}

/** The instance's retention days and archive; a misconfigured instance (days, no archive) has neither for this purpose. */
function instanceRetention(): { days: number | null; archiveUrl: string | null } {
  try {
    return retentionSettings();
  } catch {
    return { days: null, archiveUrl: null };
  }
}

/** Retention seals into the archive before it deletes: a project may not keep fewer than all days on a server that has none. */
function archiveNeededFor(days: number | null | undefined): void {
  if (typeof days === "number" && !instanceRetention().archiveUrl) {
    throw new ApiError("invalid_request", "retention_days: this server has no archive (RECONCILE_ARCHIVE_URL is not set), and retention seals records there before it deletes them; leave it empty to keep everything");
  }
}

/** One project, with how long it keeps records and why (its own setting, or the instance's; null: everything). */
export function projectDetail(p: Project) {
  return { ...projectJson(p), retention: effectiveRetention(p.retentionDays, instanceRetention().days) };
}

/**
 * Renames a project or sets its retention; with retention now on, today's seal is enqueued in
 * the project's database at once (otherwise the next start of its worker would), which must be
 * the current project's (the route's or the action's). A rename alone schedules nothing.
 */
export async function changeProjectSettings(change: ProjectChange): Promise<Project> {
  archiveNeededFor(change.retentionDays);
  const changed = await changeProject(change);
  if (change.retentionDays !== undefined) await scheduleRetention();
  return changed;
}

/** PATCH /api/v1/projects/{slug}. */
export async function changeProjectFrom(req: Request, projectId: string, actor: string, source: string | null) {
  const input = validated(projectChangeBody, await body(req));
  if (input.name === undefined && input.retention_days === undefined) throw new ApiError("invalid_request", "send name, retention_days or both");
  return projectDetail(await changeProjectSettings({ projectId, name: input.name, retentionDays: input.retention_days, actor, source }));
}

/** POST /api/v1/projects. */
export async function createProjectFrom(req: Request, actor: string, source: string | null) {
  const input = validated(projectBody, await body(req));
  archiveNeededFor(input.retention_days);
  return projectJson(await createProjectAndWait({ slug: input.slug, name: input.name ?? input.slug, retentionDays: input.retention_days ?? null, actor, source }));
}

export async function readMember(req: Request) {
  return validated(memberBody, await body(req));
}

export async function membersOf(projectId: string) {
  return { items: (await listMembers(projectId)).map(memberJson) };
}
