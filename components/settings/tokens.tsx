"use client";

import { useActionState, useState } from "react";
import { createTokenAction, revokeAnyTokenAction, revokeTokenAction, type FormState } from "@/lib/actions/auth";
import { Button, Field, Input, Notice } from "@/components/ui/form";

const SCOPE_HINTS: Record<string, string> = {
  ingest: "send what the agent did: intents, receipts, side effects",
  verify: "send canonical reads, which decide verdicts (also on other users' operations)",
  read: "read operations",
  export: "export the audit trail",
  review: "resolve, retract and reopen operations",
  admin: "manage verifiers (admins only)",
  metrics: "scrape GET /metrics for Prometheus (admins only)",
};

export function CreateTokenForm({ allowed }: { allowed: string[] }) {
  const [state, action, pending] = useActionState<FormState, FormData>(createTokenAction, null);
  const [copied, setCopied] = useState(false);
  return (
    <div className="space-y-3">
      <form action={action} className="space-y-3" aria-label="Create a token">
        <Field label="Name" htmlFor="token-name" hint="Say where it will be used, e.g. “publishing agent, production”.">
          <Input id="token-name" name="name" required maxLength={100} defaultValue={state?.error ? state.values?.name : undefined} />
        </Field>
        <fieldset>
          <legend className="text-sm font-medium">Scopes</legend>
          <div className="mt-1 flex flex-wrap gap-4">
            {allowed.map((s) => (
              <label key={s} className="flex items-center gap-2 text-sm" title={SCOPE_HINTS[s]}>
                <input type="checkbox" name="scopes" value={s} defaultChecked={s === "ingest"} aria-describedby="scope-hints" /> {s}
              </label>
            ))}
          </div>
          <ul id="scope-hints" className="mt-2 space-y-0.5 text-xs text-slate-600 dark:text-slate-400">
            {allowed.map((s) => (
              <li key={s}>
                <span className="font-medium">{s}</span>: {SCOPE_HINTS[s]}
              </li>
            ))}
          </ul>
        </fieldset>
        <Button type="submit" disabled={pending}>
          Create token
        </Button>
      </form>
      {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
      {state?.token ? (
        <div className="space-y-2 rounded-md border border-emerald-300 bg-emerald-50 p-3 dark:border-emerald-800 dark:bg-emerald-950">
          <p role="status" className="text-sm">{state.ok}</p>
          <div className="flex flex-wrap items-center gap-2">
            <code data-testid="new-token" className="break-all rounded bg-white px-2 py-1 font-mono text-sm dark:bg-slate-900">
              {state.token}
            </code>
            <Button
              type="button"
              variant="secondary"
              onClick={async () => {
                await navigator.clipboard.writeText(state.token!);
                setCopied(true);
              }}
            >
              {copied ? "Copied" : "Copy"}
            </Button>
          </div>
        </div>
      ) : null}
    </div>
  );
}

/**
 * Revoking asks first ("Revoke" → "Revoke name? Yes, revoke / Cancel", keyboard focus on the
 * confirmation), then says it is done; the row stays until the page refreshes, marked revoked.
 */
export function RevokeButton({ id, label, anyOwner }: { id: string; label: string; anyOwner?: boolean }) {
  const [state, action, pending] = useActionState<FormState, FormData>(anyOwner ? revokeAnyTokenAction : revokeTokenAction, null);
  const [asking, setAsking] = useState(false);
  if (state?.ok) return <Notice kind="ok">{state.ok}</Notice>;
  return (
    <div className="space-y-2">
      {asking ? (
        <form action={action} className="flex flex-wrap items-center gap-2" onKeyDown={(e) => e.key === "Escape" && setAsking(false)}>
          <input type="hidden" name="id" value={id} />
          <span className="text-sm">Revoke {label}? Whatever uses it stops working at once.</span>
          <Button type="submit" variant="danger" disabled={pending} autoFocus aria-label={`Yes, revoke ${label}`}>
            {pending ? "Revoking…" : "Yes, revoke"}
          </Button>
          <Button type="button" variant="secondary" onClick={() => setAsking(false)}>
            Cancel
          </Button>
        </form>
      ) : (
        <Button type="button" variant="danger" onClick={() => setAsking(true)} aria-label={`Revoke ${label}`}>
          Revoke
        </Button>
      )}
      {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
    </div>
  );
}
