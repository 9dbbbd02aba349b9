/**
 * Projects on the command line and at start (docs/API.md "Projects"): a project's
 * database is made and migrated before the project may be used (`prepareProject`), by
 * `projects:add` here and by the `project.prepare` job for one created over the API; the server
 * brings every project's database up to date when it starts (`deployProjects`).
 */
import { parseArgs } from "node:util";
import { DEFAULT_PROJECT, projectDatabaseUrl } from "@/lib/domain/projects";
import { databaseUrl } from "@/lib/store/db/database";
import { inInstance, inProject } from "@/lib/store/db/project-context";
import { recordChainCount } from "@/lib/store/chain/chain";
import { createProject, listProjects, markProjectReady, projectBySlug, setMember } from "@/lib/store/people/projects";
import { deployMigrations, type Log } from "./schema-engine";
import { missingMigrations } from "@/lib/observability/health";

/** Makes and migrates a project's database, records its chain count, and marks the project ready. */
export async function prepareProject(id: string, log?: Log): Promise<void> {
  if (id !== DEFAULT_PROJECT) await deployMigrations(projectDatabaseUrl(databaseUrl(), id), { log });
  await inProject(id, () => recordChainCount());
  await markProjectReady(id);
}

/**
 * Brings every project's database but the default one's (which `npm start` deployed first) up
 * to date, and finishes any left half-made. The migration engine runs only for a database that
 * lacks one of this code's migrations (it takes the database's locks, which another running
 * instance may hold). A project that cannot be brought up to date now is said and skipped: the
 * others start, and it is tried again at the next start.
 */
export async function deployProjects(log: Log = () => {}): Promise<void> {
  for (const p of await inInstance(() => listProjects())) {
    if (p.id === DEFAULT_PROJECT) continue;
    try {
      if (!p.ready) {
        await prepareProject(p.id);
        continue;
      }
      const missing = await inProject(p.id, () => missingMigrations().catch(() => ["(unknown)"]));
      if (!missing.length) continue;
      const { applied } = await deployMigrations(projectDatabaseUrl(databaseUrl(), p.id));
      if (applied.length) log(`project ${p.slug}: applied ${applied.length} migration(s)`);
    } catch (e) {
      log(`project ${p.slug}: its database could not be brought up to date now (${e instanceof Error ? e.message.split("\n")[0] : String(e)}); the next start tries again`);
    }
  }
}

/** The id of the project a command names with --project (default: the default project). */
export async function projectIdOf(slug: string | undefined): Promise<string> {
  return (await projectNamed(slug)).id;
}

/** The project a command names with --project (default: the default project). */
export async function projectNamed(slug: string | undefined): Promise<{ id: string; slug: string }> {
  if (slug === undefined) return { id: DEFAULT_PROJECT, slug: DEFAULT_PROJECT };
  const p = await projectBySlug(slug);
  if (!p?.ready) throw new ProjectUsageError(`--project ${slug}: no such project (projects:list shows them)`);
  return { id: p.id, slug: p.slug };
}

export class ProjectUsageError extends Error {}

export const projectCommands = (actor: string): Record<string, (args: string[]) => Promise<number>> => ({
  async "projects:add"(args) {
    const { values } = parseArgs({ args, options: { slug: { type: "string" }, name: { type: "string" }, "retention-days": { type: "string" } } });
    if (!values.slug) throw new ProjectUsageError("--slug is required");
    const days = values["retention-days"];
    if (days !== undefined && !/^\d+$/.test(days)) throw new ProjectUsageError("--retention-days takes a whole number of days");
    const p = await createProject({ slug: values.slug, name: values.name ?? values.slug, retentionDays: days === undefined ? null : Number(days), actor });
    await prepareProject(p.id);
    console.log(`created project ${p.slug} (${p.name}); its pages are at /p/${p.slug}`);
    return 0;
  },
  async "projects:list"() {
    for (const p of await listProjects()) {
      console.log(`${p.slug}\t${p.name}\t${p.ready ? "ready" : "being prepared"}\tretention ${p.retentionDays === null ? "keep everything" : `${p.retentionDays} days`}\tcreated ${p.createdAt}`);
    }
    return 0;
  },
  async "members:add"(args) {
    const { values } = parseArgs({ args, options: { project: { type: "string" }, email: { type: "string" }, role: { type: "string" } } });
    if (!values.email || !values.role) throw new ProjectUsageError("--email and --role are required");
    const m = await setMember({ projectId: await projectIdOf(values.project), email: values.email, role: values.role, actor });
    console.log(`${m.email} is ${m.role} in ${values.project ?? DEFAULT_PROJECT}`);
    return 0;
  },
});
