"use client";

import { useActionState } from "react";
import { changePasswordAction, type FormState } from "@/lib/actions/auth";
import { NewPasswordField } from "@/components/auth/password-field";
import { Button, Field, Input, Notice } from "@/components/ui/form";

/** Change your own password: the current one, the new one with its rules, and the new one again. */
export function ChangePasswordForm({ email, required }: { email: string; required?: boolean }) {
  const [state, action, pending] = useActionState<FormState, FormData>(changePasswordAction, null);
  return (
    <form action={action} className="max-w-md space-y-4" aria-label="Change your password" key={state?.ok ? "done" : "form"}>
      {state?.error ? <Notice kind="error">{state.error}</Notice> : state?.ok ? <Notice kind="ok">{state.ok}</Notice> : null}
      <input type="hidden" name="email" value={email} autoComplete="username" />
      <Field label={required ? "Password you were given" : "Current password"} htmlFor="current-password">
        <Input id="current-password" name="current" type="password" autoComplete="current-password" required autoFocus />
      </Field>
      <NewPasswordField id="next-password" name="next" label="New password" email={email} />
      <Field label="New password again" htmlFor="confirm-password">
        <Input id="confirm-password" name="confirm" type="password" autoComplete="new-password" required />
      </Field>
      <Button type="submit" disabled={pending}>
        {pending ? "Changing…" : "Change password"}
      </Button>
    </form>
  );
}
