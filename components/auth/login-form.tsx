"use client";

import { useActionState } from "react";
import { loginAction, ssoSignInAction, type FormState } from "@/lib/actions/auth";
import { MAX_IDENTIFIER_LENGTH } from "@/lib/domain/identifier-limit";
import { Button, Field, Input, Notice } from "@/components/ui/form";

export function LoginForm({ from, sso }: { from: string; sso: { id: string; name: string } | null }) {
  const [state, action, pending] = useActionState<FormState, FormData>(loginAction, null);
  return (
    <div className="space-y-4">
      <form action={action} className="space-y-4" aria-label="Sign in">
        {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
        <input type="hidden" name="from" value={from} />
        <Field label="Email" htmlFor="email">
          <Input
            id="email"
            name="email"
            type="email"
            autoComplete="username"
            maxLength={MAX_IDENTIFIER_LENGTH}
            required
            autoFocus
            defaultValue={state?.values?.email}
          />
        </Field>
        <Field label="Password" htmlFor="password">
          <Input id="password" name="password" type="password" autoComplete="current-password" required />
        </Field>
        <Button type="submit" className="w-full" disabled={pending}>
          {pending ? "Signing in…" : "Sign in"}
        </Button>
      </form>
      {sso ? (
        <form action={ssoSignInAction} className="text-center text-sm" aria-label="Single sign-on">
          <input type="hidden" name="from" value={from} />
          <button type="submit" className="text-indigo-700 underline-offset-4 hover:underline dark:text-indigo-300">
            Sign in with {sso.name}
          </button>
        </form>
      ) : null}
    </div>
  );
}
