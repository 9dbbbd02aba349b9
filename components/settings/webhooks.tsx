"use client";

import { useActionState, useState } from "react";
import type { FormState } from "@/lib/actions/guard";
import { EFFECTIVE_OUTCOMES } from "@/lib/domain/outcomes";
import { WEBHOOK_EVENT_TYPES } from "@/lib/domain/webhooks/events";
import { createWebhookAction, deleteWebhookAction, redeliverWebhookAction, setWebhookEnabledAction, testWebhookAction, updateWebhookAction } from "@/lib/actions/webhooks";
import { Button, Field, Input, Notice, Warnings } from "@/components/ui/form";
import { NewSecret } from "./webhook-secret";

const EVENT_HINTS: Record<string, string> = {
  "operation.needs_review": "an operation becomes uncertain or divergent",
  "operation.verdict_changed": "an operation's effective outcome changes later (a read, a correction)",
  "correction.created": "a reviewer resolves, retracts or reopens",
  "checkpoint.created": "a checkpoint of the audit chain is signed",
  "chain.verification_failed": "a verification finds a broken link",
};

/** The fields of an endpoint, empty (adding) or filled with its settings (editing). */
function EndpointFields({ idPrefix, values }: { idPrefix: string; values?: Record<string, string> }) {
  return (
    <>
        <Field label="URL" htmlFor={`${idPrefix}-url`} hint="Where events are POSTed; https, or a Slack incoming-webhook URL.">
          <Input id={`${idPrefix}-url`} name="url" type="url" required maxLength={2000} placeholder="https://hooks.example.com/reconcile" defaultValue={values?.url} />
        </Field>
        <Field label="Description" htmlFor={`${idPrefix}-description`} hint="Optional: who receives it.">
          <Input id={`${idPrefix}-description`} name="description" maxLength={500} defaultValue={values?.description} />
        </Field>
        <fieldset>
          <legend className="text-sm font-medium">Format</legend>
          <div className="mt-1 flex flex-wrap gap-4 text-sm">
            <label className="flex items-center gap-2">
              <input type="radio" name="format" value="standard" defaultChecked={values?.format !== "slack"} /> Standard Webhooks (signed JSON)
            </label>
            <label className="flex items-center gap-2">
              <input type="radio" name="format" value="slack" defaultChecked={values?.format === "slack"} /> Slack (a short text with the link)
            </label>
          </div>
        </fieldset>
        <fieldset>
          <legend className="text-sm font-medium">Events</legend>
          <p className="text-xs text-slate-600 dark:text-slate-400">None ticked: every event.</p>
          <div className="mt-1 grid gap-1 sm:grid-cols-2">
            {WEBHOOK_EVENT_TYPES.map((t) => (
              <label key={t} className="flex items-start gap-2 text-sm">
                <input type="checkbox" name="event_types" value={t} className="mt-1" defaultChecked={values?.event_types?.split(",").includes(t)} />
                <span>
                  <code className="font-mono">{t}</code>
                  <span className="block text-xs text-slate-600 dark:text-slate-400">{EVENT_HINTS[t]}</span>
                </span>
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset>
          <legend className="text-sm font-medium">Only operations with these outcomes</legend>
          <p className="text-xs text-slate-600 dark:text-slate-400">None ticked: any outcome. Checkpoints and chain failures are never filtered out by outcome, tool or agent.</p>
          <div className="mt-1 flex flex-wrap gap-4">
            {EFFECTIVE_OUTCOMES.map((o) => (
              <label key={o} className="flex items-center gap-2 text-sm">
                <input type="checkbox" name="outcomes" value={o} defaultChecked={values?.outcomes?.split(",").includes(o)} /> {o}
              </label>
            ))}
          </div>
        </fieldset>
        <div className="grid gap-3 sm:grid-cols-2">
          <Field label="Only these tools" htmlFor={`${idPrefix}-tools`} hint="Comma-separated; empty: any tool.">
            <Input id={`${idPrefix}-tools`} name="tools" placeholder="social.publish, db.insert" defaultValue={values?.tools} />
          </Field>
          <Field label="Only these agents" htmlFor={`${idPrefix}-agents`} hint="Comma-separated; empty: any agent.">
            <Input id={`${idPrefix}-agents`} name="agents" defaultValue={values?.agents} />
          </Field>
        </div>
    </>
  );
}

/** Editing an endpoint's URL, format and filters (its secret stays). */
export function EditWebhookForm({ id, values }: { id: string; values: Record<string, string> }) {
  const [state, action, pending] = useActionState<FormState, FormData>(updateWebhookAction, null);
  return (
    <details className="w-full">
      <summary className="cursor-pointer text-sm text-indigo-700 underline dark:text-indigo-300">Edit URL, format and filters</summary>
      <form action={action} className="mt-3 space-y-4" aria-label={`Edit ${values.url}`}>
        <input type="hidden" name="id" value={id} />
        <EndpointFields idPrefix={`edit-${id}`} values={values} />
        <Button type="submit" disabled={pending}>
          Save
        </Button>
        {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
        {state?.ok ? <Notice kind="ok">{state.ok}</Notice> : null}
        <Warnings warnings={state?.warnings} />
      </form>
    </details>
  );
}

export function CreateWebhookForm() {
  const [state, action, pending] = useActionState<FormState, FormData>(createWebhookAction, null);
  const v = state?.error ? state.values : undefined;
  return (
    <div className="space-y-3">
      <form action={action} className="space-y-4" aria-label="Add an endpoint">
        <EndpointFields idPrefix="webhook" values={v} />
        <Button type="submit" disabled={pending}>
          Add endpoint
        </Button>
      </form>
      {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
      <Warnings warnings={state?.warnings} />
      {state?.token ? <NewSecret message={state.ok ?? ""} secret={state.token} /> : null}
    </div>
  );
}

function ActionButton({
  action,
  fields,
  label,
  ariaLabel,
  variant = "secondary",
}: {
  action: (prev: FormState, form: FormData) => Promise<FormState>;
  fields: Record<string, string>;
  label: string;
  ariaLabel: string;
  variant?: "primary" | "secondary" | "danger";
}) {
  const [state, run, pending] = useActionState<FormState, FormData>(action, null);
  return (
    <form action={run} className="inline-flex flex-col gap-1">
      {Object.entries(fields).map(([k, v]) => (
        <input key={k} type="hidden" name={k} value={v} />
      ))}
      <Button type="submit" variant={variant} disabled={pending} aria-label={ariaLabel}>
        {label}
      </Button>
      {state?.error ? <Notice kind="error">{state.error}</Notice> : null}
      {state?.ok ? <Notice kind="ok">{state.ok}</Notice> : null}
    </form>
  );
}

export function EndpointActions({ id, url, enabled }: { id: string; url: string; enabled: boolean }) {
  const [confirming, setConfirming] = useState(false);
  return (
    <div className="flex flex-wrap items-start gap-2">
      <ActionButton action={testWebhookAction} fields={{ id }} label="Send a test event" ariaLabel={`Send a test event to ${url}`} variant="primary" />
      <ActionButton
        action={setWebhookEnabledAction}
        fields={{ id, enabled: String(!enabled) }}
        label={enabled ? "Disable" : "Enable"}
        ariaLabel={`${enabled ? "Disable" : "Enable"} ${url}`}
      />
      {confirming ? (
        <>
          <ActionButton action={deleteWebhookAction} fields={{ id }} label="Delete for good" ariaLabel={`Delete ${url} and its delivery log`} variant="danger" />
          <Button type="button" variant="secondary" onClick={() => setConfirming(false)}>
            Keep it
          </Button>
        </>
      ) : (
        <Button type="button" variant="danger" onClick={() => setConfirming(true)} aria-label={`Delete ${url}`}>
          Delete
        </Button>
      )}
    </div>
  );
}

export function RedeliverButton({ endpoint, delivery, what }: { endpoint: string; delivery: string; what: string }) {
  return <ActionButton action={redeliverWebhookAction} fields={{ endpoint, delivery }} label="Redeliver" ariaLabel={`Redeliver ${what}`} />;
}
