"use server";

import { revalidatePath } from "next/cache";
import { authorizeAction, guardedAction, guardedProjectAction, type FormState } from "./guard";
import { listMembers, removeMember, setMember } from "@/lib/store/people/projects";
import { changeProjectSettings, createProjectAndWait } from "@/lib/api/projects";

const field = (form: FormData, name: string) => String(form.get(name) ?? "");

/**
 * An instance admin creates a project; the server's job makes its database (a second or two),
 * and the answer says when it is ready, with a link.
 */
export async function createProjectAction(_prev: FormState, form: FormData): Promise<FormState> {
  const values = { slug: field(form, "slug"), name: field(form, "name"), retention_days: field(form, "retention_days") };
  return guardedAction(values, async () => {
    const { principal, source } = await authorizeAction("projects:manage");
    const days = values.retention_days.trim();
    if (days !== "" && !/^\d+$/.test(days)) return { error: "Retention is a whole number of days, or empty to keep everything.", values };
    const made = await createProjectAndWait({ slug: values.slug, name: values.name || values.slug, retentionDays: days === "" ? null : Number(days), actor: principal.email, source });
    revalidatePath("/settings/projects");
    return { ok: made.ready ? `Created ${made.name}: open it at /p/${made.slug}.` : `Created ${made.name}; its database is still being made: it opens at /p/${made.slug} in a moment.`, values: { slug: made.slug } };
  });
}

/** A project's admin adds an existing user to it, or changes their role there. */
export async function setMemberAction(_prev: FormState, form: FormData): Promise<FormState> {
  const values = { email: field(form, "email"), role: field(form, "role") };
  return guardedProjectAction("members:manage", values, async ({ principal, source }) => {
    const m = await setMember({ projectId: principal.project.id, email: values.email, role: values.role, actor: principal.email, source });
    revalidatePath("/settings/members");
    return { ok: `${m.email} is ${m.role} in ${principal.project.name}.` };
  });
}

/** A project's admin takes a member out (their tokens for the project stop working). */
export async function removeMemberAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guardedProjectAction("members:manage", {}, async ({ principal, source }) => {
    const member = (await listMembers(principal.project.id)).find((m) => m.userId === field(form, "user") && m.since !== null);
    if (!member) return { error: "No such member." };
    await removeMember({ projectId: principal.project.id, userId: member.userId, actor: principal.email, source });
    revalidatePath("/settings/members");
    return { ok: `${member.email} is no longer in ${principal.project.name}.` };
  });
}

/**
 * A project's admin sets how long it keeps records (the audit page's retention panel): a number
 * of days, or empty for the server's default (RECONCILE_RETENTION_DAYS; keep everything when unset).
 */
export async function setRetentionAction(_prev: FormState, form: FormData): Promise<FormState> {
  const values = { retention_days: field(form, "retention_days").trim() };
  return guardedProjectAction("project:settings", values, async ({ principal, source }) => {
    const days = values.retention_days;
    if (days !== "" && !/^\d{1,5}$/.test(days)) return { error: "Retention is a whole number of days, or empty for the server's default.", values };
    const p = await changeProjectSettings({ projectId: principal.project.id, retentionDays: days === "" ? null : Number(days), actor: principal.email, source });
    revalidatePath("/audit");
    return { ok: p.retentionDays === null ? `${p.name} follows the server's default now.` : `${p.name} keeps ${p.retentionDays.toLocaleString("en")} day${p.retentionDays === 1 ? "" : "s"} now.`, values: { retention_days: days } };
  });
}

/** A project's admin renames it (its slug, in every URL, stays). */
export async function renameProjectAction(_prev: FormState, form: FormData): Promise<FormState> {
  const values = { name: field(form, "name") };
  return guardedProjectAction("project:settings", values, async ({ principal, source }) => {
    const p = await changeProjectSettings({ projectId: principal.project.id, name: values.name, actor: principal.email, source });
    revalidatePath("/", "layout");
    return { ok: `This project is called ${p.name} now; its address stays /p/${p.slug}.`, values: { name: p.name } };
  });
}
