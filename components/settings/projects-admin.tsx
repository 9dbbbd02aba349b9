"use client";

import { useActionState } from "react";
import { createProjectAction, removeMemberAction, renameProjectAction, setMemberAction } from "@/lib/actions/projects";
import type { FormState } from "@/lib/actions/guard";
import { ROLES } from "@/lib/domain/permissions";
import { Button, Field, Input, Notice, Select } from "@/components/ui/form";

export function NewProjectForm() {
  const [state, action, pending] = useActionState<FormState, FormData>(createProjectAction, null);
  const made = state?.ok ? state.values?.slug : undefined;
  return (
    <form action={action} className="grid gap-3 sm:grid-cols-[1fr_2fr_1fr_auto] sm:items-start" aria-label="Create a project">
      <Field label="Slug (in its URLs)" htmlFor="project-slug">
        <Input id="project-slug" name="slug" required minLength={2} maxLength={40} pattern="[a-z][a-z0-9\-]*[a-z0-9]" title="lower-case letters, digits and hyphens, starting with a letter" defaultValue={state?.error ? state.values?.slug : ""} placeholder="billing-agents" />
      </Field>
      <Field label="Name" htmlFor="project-name">
        <Input id="project-name" name="name" maxLength={100} defaultValue={state?.error ? state.values?.name : ""} placeholder="Billing agents" />
      </Field>
      <Field label="Retention (days)" htmlFor="project-retention">
        <Input id="project-retention" name="retention_days" inputMode="numeric" pattern="\d*" defaultValue={state?.error ? state.values?.retention_days : ""} placeholder="keep all" />
      </Field>
      <Button type="submit" disabled={pending} className="sm:mt-6">
        {pending ? "Creating…" : "Create project"}
      </Button>
      <div className="sm:col-span-4" aria-live="polite">
        {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
        {state?.ok ? (
          <Notice kind="ok">
            {state.ok}{" "}
            {made ? (
              <a href={`/p/${made}`} className="font-medium underline underline-offset-2">
                Open it
              </a>
            ) : null}
          </Notice>
        ) : null}
      </div>
    </form>
  );
}

export function AddMemberForm() {
  const [state, action, pending] = useActionState<FormState, FormData>(setMemberAction, null);
  return (
    <form action={action} className="grid gap-3 sm:grid-cols-[3fr_1fr_auto] sm:items-start" aria-label="Add a member">
      <Field label="Email of an existing user" htmlFor="member-email">
        <Input id="member-email" name="email" type="email" required maxLength={254} defaultValue={state?.error ? state.values?.email : ""} />
      </Field>
      <Field label="Role" htmlFor="member-role">
        <Select id="member-role" name="role" defaultValue={state?.values?.role ?? "viewer"} className="w-full py-2">
          {ROLES.map((r) => (
            <option key={r}>{r}</option>
          ))}
        </Select>
      </Field>
      <Button type="submit" disabled={pending} className="sm:mt-6">
        Add member
      </Button>
      <div className="sm:col-span-3" aria-live="polite">
        {state?.error ? <Notice kind="error">{state.error}</Notice> : state?.ok ? <Notice kind="ok">{state.ok}</Notice> : null}
      </div>
    </form>
  );
}

/** The project's name, for its admins (the members page). */
export function RenameProjectForm({ name, slug }: { name: string; slug: string }) {
  const [state, action, pending] = useActionState<FormState, FormData>(renameProjectAction, null);
  return (
    <form action={action} className="grid gap-3 sm:grid-cols-[minmax(0,24rem)_1fr] sm:items-start" aria-label="Rename this project">
      <Field label="Name" htmlFor="project-rename" hint={`Its address stays /p/${slug}.`}>
        <Input id="project-rename" name="name" required maxLength={100} defaultValue={state?.values?.name ?? name} />
      </Field>
      <Button type="submit" disabled={pending} className="sm:mt-6 sm:justify-self-start">
        {pending ? "Renaming…" : "Rename"}
      </Button>
      <div className="sm:col-span-2" aria-live="polite">
        {state?.error ? <Notice kind="error">{state.error}</Notice> : state?.ok ? <Notice kind="ok">{state.ok}</Notice> : null}
      </div>
    </form>
  );
}

export type MemberRowData = { userId: string; email: string; role: string; instanceAdmin: boolean; disabled: boolean; member: boolean };

export function MemberRow({ m, isMe }: { m: MemberRowData; isMe: boolean }) {
  const [state, action, pending] = useActionState<FormState, FormData>(setMemberAction, null);
  const [removed, remove, removing] = useActionState<FormState, FormData>(removeMemberAction, null);
  return (
    <tr className="border-t border-slate-200 align-top dark:border-slate-800">
      <td className="py-3 pr-4">
        {m.email}
        {isMe ? <span className="ml-2 text-xs text-slate-600 dark:text-slate-400">(you)</span> : null}
        {m.instanceAdmin ? <span className="ml-2 rounded bg-slate-100 px-1.5 py-0.5 text-xs dark:bg-slate-800">instance admin</span> : null}
        {m.disabled ? <span className="ml-2 text-xs text-rose-700 dark:text-rose-300">disabled</span> : null}
        {state?.error ? <div className="mt-2"><Notice kind="error">{state.error}</Notice></div> : null}
        {removed?.error ? <div className="mt-2"><Notice kind="error">{removed.error}</Notice></div> : null}
        {removed?.ok ? <div className="mt-2"><Notice kind="ok">{removed.ok}</Notice></div> : null}
      </td>
      <td className="py-3 pr-4">
        {m.instanceAdmin ? (
          <span title="An instance admin is admin in every project">admin</span>
        ) : (
          <form action={action} className="flex items-center gap-2">
            <input type="hidden" name="email" value={m.email} />
            <label className="sr-only" htmlFor={`member-role-${m.userId}`}>
              Role of {m.email}
            </label>
            <Select id={`member-role-${m.userId}`} name="role" defaultValue={m.role}>
              {ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </Select>
            <Button type="submit" variant="secondary" disabled={pending}>
              Change role
            </Button>
          </form>
        )}
      </td>
      <td className="py-3">
        {m.member && !m.instanceAdmin ? (
          <form action={remove}>
            <input type="hidden" name="user" value={m.userId} />
            <Button type="submit" variant="secondary" disabled={removing}>
              Remove
            </Button>
          </form>
        ) : null}
      </td>
    </tr>
  );
}
