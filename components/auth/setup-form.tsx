"use client";

import { useActionState } from "react";
import { setupAction, type FormState } from "@/lib/actions/auth";
import { MAX_IDENTIFIER_LENGTH } from "@/lib/domain/identifier-limit";
import { MIN_PASSWORD_LENGTH } from "@/lib/domain/password-policy";
import { NewPasswordField } from "@/components/auth/password-field";
import { Button, Field, Input, Notice } from "@/components/ui/form";

export function SetupForm({ needsCode }: { needsCode: boolean }) {
  const [state, action, pending] = useActionState<FormState, FormData>(setupAction, null);
  return (
    <form action={action} className="space-y-4" aria-label="Create the first admin">
      {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
      {needsCode ? (
        <Field label="Setup code" htmlFor="code" hint="The server printed it in its log when it started, because it is reachable from other machines.">
          <Input id="code" name="code" autoComplete="off" spellCheck={false} required autoFocus />
        </Field>
      ) : null}
      <Field label="Email" htmlFor="email">
        <Input
          id="email"
          name="email"
          type="email"
          autoComplete="username"
          maxLength={MAX_IDENTIFIER_LENGTH}
          required
          autoFocus={!needsCode}
          defaultValue={state?.values?.email}
        />
      </Field>
      <NewPasswordField id="password" name="password" label="Password" />
      <Field label="Password again" htmlFor="confirm">
        <Input id="confirm" name="confirm" type="password" autoComplete="new-password" minLength={MIN_PASSWORD_LENGTH} required />
      </Field>
      <Button type="submit" className="w-full" disabled={pending}>
        {pending ? "Creating…" : "Create admin and sign in"}
      </Button>
    </form>
  );
}
