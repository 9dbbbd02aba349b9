"use server";

import { revalidatePath } from "next/cache";
import { guardedProjectAction, type FormState } from "@/lib/actions/guard";
import { createEndpointWith, rotateSecretWith, sendTest, updateEndpointWith } from "@/lib/api/webhooks";
import { wakeJobs } from "@/lib/jobs/worker";
import { deleteEndpoint, redeliver, updateEndpoint } from "@/lib/store/settings/webhooks";

/**
 * The webhook settings page's server actions (admins). Each checks the permission itself and
 * answers a message the page shows; creating one answers the secret, shown this once.
 */
const field = (form: FormData, name: string) => {
  const v = form.get(name);
  return typeof v === "string" ? v : "";
};
const list = (form: FormData, name: string) =>
  form
    .getAll(name)
    .flatMap((v) => (typeof v === "string" ? v.split(",") : []))
    .map((v) => v.trim())
    .filter(Boolean);

const PAGE = "/settings/webhooks";

/** The settings a form carries, as the API takes them. */
const settings = (form: FormData) => ({
  url: field(form, "url"),
  description: field(form, "description"),
  format: field(form, "format") || "standard",
  filters: { event_types: list(form, "event_types"), outcomes: list(form, "outcomes"), tools: list(form, "tools"), agents: list(form, "agents") },
});

export async function createWebhookAction(_prev: FormState, form: FormData): Promise<FormState> {
  const values = { url: field(form, "url"), description: field(form, "description"), tools: field(form, "tools"), agents: field(form, "agents") };
  return guardedProjectAction("webhooks:manage", values, async ({ principal }) => {
    const made = await createEndpointWith(settings(form), principal.email);
    revalidatePath(PAGE);
    return { ok: `Added ${made.url}. Copy its signing secret now: it is shown once.`, warnings: made.warnings, token: made.secret, values: { id: made.id } };
  });
}

export async function updateWebhookAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guardedProjectAction("webhooks:manage", {}, async () => {
    const e = await updateEndpointWith(field(form, "id"), settings(form));
    revalidatePath(PAGE);
    return { ok: `Saved ${e.url}.`, warnings: e.warnings };
  });
}

export async function setWebhookEnabledAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guardedProjectAction("webhooks:manage", {}, async () => {
    const enabled = field(form, "enabled") === "true";
    const e = await updateEndpoint(field(form, "id"), { enabled });
    revalidatePath(PAGE);
    return { ok: `${e.url} is ${enabled ? "enabled" : "disabled"}.` };
  });
}

export async function deleteWebhookAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guardedProjectAction("webhooks:manage", {}, async () => {
    await deleteEndpoint(field(form, "id"));
    revalidatePath(PAGE);
    return { ok: "Endpoint deleted, with its delivery log." };
  });
}

export async function testWebhookAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guardedProjectAction("webhooks:manage", {}, async ({ principal }) => {
    const sent = await sendTest(field(form, "id"), principal.email);
    wakeJobs();
    revalidatePath(PAGE);
    return { ok: `Test event ${sent.message_id} queued: its delivery appears in the log below.` };
  });
}

export async function redeliverWebhookAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guardedProjectAction("webhooks:manage", {}, async () => {
    await redeliver(field(form, "endpoint"), field(form, "delivery"));
    wakeJobs();
    revalidatePath(PAGE);
    return { ok: "Redelivery queued (the same webhook-id)." };
  });
}

/** "Rotate secret": answers the new secret, shown this once, and until when the old one still signs. */
export async function rotateWebhookSecretAction(_prev: FormState, form: FormData): Promise<FormState> {
  return guardedProjectAction("webhooks:manage", {}, async () => {
    const hours = field(form, "overlap_hours").trim();
    const e = await rotateSecretWith(field(form, "id"), hours === "" ? {} : { overlap_hours: Number(hours) });
    revalidatePath(PAGE);
    const old = e.previous_secret ? `The old secret still signs too until ${e.previous_secret.accepted_until.replace("T", " ").replace(/\.\d+Z$/, " UTC")}.` : "The old secret no longer signs.";
    return { ok: `New signing secret for ${e.url}. Copy it now: it is shown once. ${old}`, token: e.secret };
  });
}
