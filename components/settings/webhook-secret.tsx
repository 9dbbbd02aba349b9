"use client";

import { useActionState, useState } from "react";
import type { FormState } from "@/lib/actions/guard";
import { rotateWebhookSecretAction } from "@/lib/actions/webhooks";
import { Button, Field, Input, Notice } from "@/components/ui/form";

/** A signing secret shown this once (after creating an endpoint or rotating its secret), with a copy button. */
export function NewSecret({ message, secret }: { message: string; secret: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="space-y-2 rounded-md border border-emerald-300 bg-emerald-50 p-3 dark:border-emerald-800 dark:bg-emerald-950">
      <p role="status" className="text-sm">
        {message}
      </p>
      <div className="flex flex-wrap items-center gap-2">
        <code data-testid="new-secret" className="break-all rounded bg-white px-2 py-1 font-mono text-sm dark:bg-slate-900">
          {secret}
        </code>
        <Button
          type="button"
          variant="secondary"
          onClick={async () => {
            await navigator.clipboard.writeText(secret);
            setCopied(true);
          }}
        >
          {copied ? "Copied" : "Copy"}
        </Button>
      </div>
      <p className="text-xs text-slate-700 dark:text-slate-300">
        Verify each request with a Standard Webhooks library and this secret (headers <code>webhook-id</code>, <code>webhook-timestamp</code>,{" "}
        <code>webhook-signature</code>).
      </p>
    </div>
  );
}

/**
 * "Rotate secret": a new secret, shown once; the old one keeps signing too (a second signature)
 * for the hours asked, so the receiver can switch without missing a delivery.
 */
export function RotateSecretForm({ id, url, defaultOverlapHours }: { id: string; url: string; defaultOverlapHours: number }) {
  const [state, action, pending] = useActionState<FormState, FormData>(rotateWebhookSecretAction, null);
  return (
    <details className="w-full">
      <summary className="cursor-pointer text-sm text-indigo-700 underline dark:text-indigo-300">Rotate the signing secret</summary>
      <form action={action} className="mt-3 flex flex-wrap items-end gap-3" aria-label={`Rotate the secret of ${url}`}>
        <input type="hidden" name="id" value={id} />
        <Field label="Old secret still signs for (hours)" htmlFor={`rotate-${id}-hours`} hint="0 to 168; 0 drops it at once.">
          <Input id={`rotate-${id}-hours`} name="overlap_hours" type="number" min={0} max={168} step="any" defaultValue={defaultOverlapHours} className="w-32" />
        </Field>
        <Button type="submit" variant="secondary" disabled={pending}>
          Rotate secret
        </Button>
      </form>
      <div className="mt-3">
        {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
        {state?.token ? <NewSecret message={state.ok ?? ""} secret={state.token} /> : null}
      </div>
    </details>
  );
}
