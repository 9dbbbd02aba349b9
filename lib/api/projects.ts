import "server-only";
import { z } from "zod";
import { isPlainObject } from "@/lib/domain/json";
import { ROLES } from "@/lib/domain/permissions";
import { createProjectWithJob, listMembers, listProjects, projectById, type Member, type NewProject, type Project } from "@/lib/store/people/projects";
import { readJsonBody } from "./body";
import { ApiError, validated } from "./errors";

/** A project or member body is a few short fields: 16 KiB bounds any. */
const MAX_BODY_BYTES = 16 * 1024;

const projectBody = z.strictObject({
  slug: z.string().max(100),
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

/** POST /api/v1/projects. */
export async function createProjectFrom(req: Request, actor: string, source: string | null) {
  const input = validated(projectBody, await body(req));
  return projectJson(await createProjectAndWait({ slug: input.slug, name: input.name ?? input.slug, retentionDays: input.retention_days ?? null, actor, source }));
}

export async function readMember(req: Request) {
  return validated(memberBody, await body(req));
}

export async function membersOf(projectId: string) {
  return { items: (await listMembers(projectId)).map(memberJson) };
}
