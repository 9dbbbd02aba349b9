"use client";

import { useActionState } from "react";
import { loginAction, type FormState } from "@/lib/auth/actions";
import { Button, Field, Input, Notice } from "@/components/ui/form";

export function LoginForm({ from, sso }: { from: string; sso: { id: string; name: string } | null }) {
  const [state, action, pending] = useActionState<FormState, FormData>(loginAction, null);
  return (
    <form action={action} className="space-y-4" aria-label="Sign in">
      {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
      <input type="hidden" name="from" value={from} />
      <Field label="Email" htmlFor="email">
        <Input id="email" name="email" type="email" autoComplete="username" required autoFocus defaultValue={state?.values?.email} />
      </Field>
      <Field label="Password" htmlFor="password">
        <Input id="password" name="password" type="password" autoComplete="current-password" required />
      </Field>
      <Button type="submit" className="w-full" disabled={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </Button>
      {sso ? (
        <p className="text-center text-sm">
          <a className="text-indigo-700 underline-offset-4 hover:underline dark:text-indigo-300" href={`/api/auth/signin/${sso.id}`}>
            Sign in with {sso.name}
          </a>
        </p>
      ) : null}
    </form>
  );
}
