import "server-only";
import type { z } from "zod";
import { checkJsonShape } from "@/lib/domain/json";
import { endpointCreateSchema, endpointUpdateSchema, type EndpointCreate, type EndpointUpdate } from "@/lib/domain/webhooks/endpoint";
import { newSecret, sealSecret, secretHint } from "@/lib/domain/webhooks/signing";
import { currentProjectId } from "@/lib/store/db/project-context";
import { checkUrl, outboundPolicy, OutboundRefused } from "@/lib/outbound/guarded-request";
import { overlapEnd, rotateSecretSchema } from "@/lib/domain/webhooks/rotation";
import { envSetting } from "@/lib/domain/settings";
import { createEndpoint, rotateEndpointSecret, sendTestEvent, updateEndpoint, type Endpoint } from "@/lib/store/settings/webhooks";
import { publicLinks } from "@/lib/store/work/webhook-outbox";
import { testEvent } from "@/lib/domain/webhooks/events";
import { serverSecret } from "@/lib/crypto/server-secret";
import { checkContentType, parseJsonBytes, readBodyBytes, readJsonBody } from "./body";
import { ApiError, validated } from "./errors";
import { toolWarnings } from "./warnings";

/** Endpoint settings are small: anything bigger is not a setting. */
export const WEBHOOK_BODY_LIMIT = 64 * 1024;

function parsed<T>(value: unknown, schema: z.ZodType<T>): T {
  const shape = checkJsonShape(value, 6, 1000);
  if (shape) throw new ApiError("invalid_request", `${shape.path}: ${shape.message}`, [shape]);
  // Each message and the details are bounded (lib/domain/refusal.ts): 5,000 unknown keys are one short answer.
  return validated(schema, value);
}

/** The URL must be one the sender may call (https unless RECONCILE_WEBHOOK_ALLOW_HTTP=1). */
function checkEndpointUrl(url: string): void {
  try {
    checkUrl(url, outboundPolicy("webhook", [new URL(url).hostname]));
  } catch (e) {
    if (e instanceof OutboundRefused) throw new ApiError("invalid_request", `url: ${e.message}`, [{ path: "url", message: e.message }]);
    throw e;
  }
}

/** What a save answers besides the endpoint: tools in its filters that no operation has used yet (toolWarnings). */
type Warned = { warnings: string[] };

/** Creates an endpoint; the answer carries its secret, the only time it is shown. */
export async function createEndpointFrom(req: Request, by: string): Promise<Endpoint & { secret: string } & Warned> {
  return createEndpointWith(await readJsonBody(req, WEBHOOK_BODY_LIMIT), by);
}

/** The same from a value already read (the settings page's form). */
export async function createEndpointWith(value: unknown, by: string): Promise<Endpoint & { secret: string } & Warned> {
  const input: EndpointCreate = parsed(value, endpointCreateSchema);
  checkEndpointUrl(input.url);
  const secret = newSecret();
  const endpoint = await createEndpoint(input, { sealed: sealSecret(secret, serverSecret(), currentProjectId()), hint: secretHint(secret) }, by);
  return { ...endpoint, secret, warnings: await toolWarnings(endpoint.filters.tools) };
}

export async function updateEndpointFrom(req: Request, id: string): Promise<Endpoint & Warned> {
  return updateEndpointWith(id, await readJsonBody(req, WEBHOOK_BODY_LIMIT));
}

export async function updateEndpointWith(id: string, value: unknown): Promise<Endpoint & Warned> {
  const patch: EndpointUpdate = parsed(value, endpointUpdateSchema);
  if (patch.url) checkEndpointUrl(patch.url);
  const endpoint = await updateEndpoint(id, patch);
  return { ...endpoint, warnings: patch.filters ? await toolWarnings(endpoint.filters.tools) : [] };
}

/**
 * Rotates the endpoint's secret; the answer carries the new one, the only time it is shown. An
 * empty body is `{}`: the overlap is then RECONCILE_WEBHOOK_SECRET_OVERLAP_HOURS (default 24).
 */
export async function rotateSecretFrom(req: Request, id: string): Promise<Endpoint & { secret: string }> {
  const bytes = await readBodyBytes(req, WEBHOOK_BODY_LIMIT);
  if (bytes.length === 0) return rotateSecretWith(id, {});
  checkContentType(req.headers.get("content-type"));
  return rotateSecretWith(id, await parseJsonBytes(bytes));
}

/** The same from a value already read (the settings page's button). */
export async function rotateSecretWith(id: string, value: unknown): Promise<Endpoint & { secret: string }> {
  const input = parsed(value, rotateSecretSchema);
  const hours = input.overlap_hours ?? envSetting("RECONCILE_WEBHOOK_SECRET_OVERLAP_HOURS");
  const now = new Date();
  const secret = newSecret();
  const endpoint = await rotateEndpointSecret(id, { sealed: sealSecret(secret, serverSecret(), currentProjectId()), hint: secretHint(secret) }, overlapEnd(now, hours), now);
  return { ...endpoint, secret };
}

/** "Send a test event" to one endpoint. */
export async function sendTest(endpointId: string, by: string) {
  return sendTestEvent(endpointId, testEvent(new Date().toISOString(), by, publicLinks()));
}
