"use client";

import { useActionState } from "react";
import { setRetentionAction } from "@/lib/actions/projects";
import type { FormState } from "@/lib/actions/guard";
import { Button, Field, Input, Notice } from "@/components/ui/form";

/** The project's own retention, for its admins: whole days, or empty for the server's default. */
export function RetentionForm({ own, serverDays }: { own: number | null; serverDays: number | null }) {
  const [state, action, pending] = useActionState<FormState, FormData>(setRetentionAction, null);
  const fallback = serverDays === null ? "keep everything" : `the server's ${serverDays.toLocaleString("en")} days`;
  return (
    <form action={action} className="grid gap-3 sm:grid-cols-[16rem_1fr] sm:items-start" aria-label="This project's retention">
      <Field label="Keep records for (days)" htmlFor="retention-days" hint={`Empty: ${fallback}.`}>
        <Input
          id="retention-days"
          name="retention_days"
          inputMode="numeric"
          pattern="\d*"
          maxLength={5}
          defaultValue={state?.values?.retention_days ?? (own === null ? "" : String(own))}
          placeholder={fallback}
        />
      </Field>
      <Button type="submit" disabled={pending} className="sm:mt-6 sm:justify-self-start">
        {pending ? "Saving…" : "Save retention"}
      </Button>
      <div className="sm:col-span-2" aria-live="polite">
        {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
        {state?.ok ? <Notice kind="ok">{state.ok}</Notice> : null}
      </div>
    </form>
  );
}
