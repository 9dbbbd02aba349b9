"use client";

import { useActionState } from "react";
import { addUserAction, setPasswordAction, signOutEverywhereAction, updateUserAction, type FormState } from "@/lib/actions/auth";
import { ROLES } from "@/lib/domain/permissions";
import { NewPasswordField } from "@/components/auth/password-field";
import { Button, Field, Input, Notice, Select } from "@/components/ui/form";

type User = { id: string; email: string; role: string | null; disabled: boolean; createdAt: string };

export function AddUserForm() {
  const [state, action, pending] = useActionState<FormState, FormData>(addUserAction, null);
  return (
    <form action={action} className="grid gap-3 sm:grid-cols-[2fr_2fr_1fr_auto] sm:items-start" aria-label="Add a user">
      <Field label="Email" htmlFor="new-email">
        <Input id="new-email" name="email" type="email" required maxLength={254} defaultValue={state?.values?.email} />
      </Field>
      <NewPasswordField id="new-password" name="password" label="Initial password" />
      <Field label="Role" htmlFor="new-role">
        <Select id="new-role" name="role" defaultValue={state?.values?.role ?? "viewer"} key={state?.values?.role} className="w-full py-2">
          {ROLES.map((r) => (
            <option key={r}>{r}</option>
          ))}
        </Select>
      </Field>
      <Button type="submit" disabled={pending} className="sm:mt-6">
        Add user
      </Button>
      <p className="text-xs text-slate-600 sm:col-span-4 dark:text-slate-400">They choose their own password at their first sign-in.</p>
      <div className="sm:col-span-4">
        {state?.error ? <Notice kind="error">{state.error}</Notice> : state?.ok ? <Notice kind="ok">{state.ok}</Notice> : null}
      </div>
    </form>
  );
}

export function UserRow({ user, isMe }: { user: User; isMe: boolean }) {
  const [state, action, pending] = useActionState<FormState, FormData>(updateUserAction, null);
  const [ended, endSessions, ending] = useActionState<FormState, FormData>(signOutEverywhereAction, null);
  return (
    <tr className="border-t border-slate-200 align-top dark:border-slate-800">
      {/* A floor for the address on a phone: the table scrolls sideways instead of breaking it letter by letter. */}
      <td className="min-w-48 py-3 pr-4">
        <span className="font-medium break-all">{user.email}</span>
        {isMe ? <span className="ml-2 text-xs text-slate-600 dark:text-slate-400">(you)</span> : null}
        {state?.error ? <div className="mt-2"><Notice kind="error">{state.error}</Notice></div> : null}
        {ended?.error ? <div className="mt-2"><Notice kind="error">{ended.error}</Notice></div> : null}
        {ended?.ok ? <div className="mt-2"><Notice kind="ok">{ended.ok}</Notice></div> : null}
      </td>
      <td className="py-3 pr-4">
        <form action={action} className="flex items-center gap-2">
          <input type="hidden" name="id" value={user.id} />
          <label className="sr-only" htmlFor={`role-${user.id}`}>
            Role of {user.email}
          </label>
          <Select id={`role-${user.id}`} name="role" defaultValue={user.role ?? ""}>
            {user.role === null ? (
              <option value="" disabled>
                not a member
              </option>
            ) : null}
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </Select>
          <Button type="submit" variant="secondary" disabled={pending}>
            Change role
          </Button>
        </form>
      </td>
      <td className="py-3 pr-4">{user.disabled ? <span className="text-rose-700 dark:text-rose-300">disabled</span> : "active"}</td>
      <td className="py-3">
        <div className="flex flex-wrap gap-2">
          <form action={endSessions}>
            <input type="hidden" name="id" value={user.id} />
            <Button type="submit" variant="secondary" disabled={ending} aria-label={`Sign out ${user.email} everywhere`} title="End every session of this user at once, on every device">
              Sign out everywhere
            </Button>
          </form>
 <SetPassword user={user} />
          <form action={action}>
            <input type="hidden" name="id" value={user.id} />
            <input type="hidden" name="disabled" value={user.disabled ? "false" : "true"} />
            <Button type="submit" variant={user.disabled ? "secondary" : "danger"} disabled={pending} aria-label={`${user.disabled ? "Enable" : "Disable"} ${user.email}`}>
              {user.disabled ? "Enable" : "Disable"}
            </Button>
          </form>
        </div>
      </td>
    </tr>
  );
}

/** An admin sets a user's password (a reset), behind a disclosure; the user must change it at their next sign-in. */
function SetPassword({ user }: { user: User }) {
  const [state, action, pending] = useActionState<FormState, FormData>(setPasswordAction, null);
  return (
    <details className="group">
      <summary className="inline-flex cursor-pointer list-none items-center rounded-md border border-slate-300 px-3 py-2 text-sm font-medium hover:bg-slate-50 dark:border-slate-700 dark:hover:bg-slate-800" aria-label={`Set a password for ${user.email}`}>
        Set password
      </summary>
      <form action={action} className="mt-2 w-64 space-y-2" aria-label={`New password for ${user.email}`} key={state?.ok ?? "form"}>
        <input type="hidden" name="id" value={user.id} />
        <NewPasswordField id={`set-password-${user.id}`} name="password" label="New password" email={user.email} />
        <p className="text-xs text-slate-600 dark:text-slate-400">Their sessions end; they choose their own at their next sign-in.</p>
        <Button type="submit" variant="secondary" disabled={pending}>
          Set password
        </Button>
      </form>
      {state?.error ? <Notice kind="error">{state.error}</Notice> : state?.ok ? <Notice kind="ok">{state.ok}</Notice> : null}
    </details>
  );
}
