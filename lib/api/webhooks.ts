import "server-only";
import type { z } from "zod";
import { checkJsonShape } from "@/lib/domain/json";
import { endpointCreateSchema, endpointUpdateSchema, type EndpointCreate, type EndpointUpdate } from "@/lib/domain/webhooks/endpoint";
import { newSecret, sealSecret, secretHint } from "@/lib/domain/webhooks/signing";
import { checkUrl, outboundPolicy, OutboundRefused } from "@/lib/outbound/guarded-request";
import { createEndpoint, sendTestEvent, updateEndpoint, type Endpoint } from "@/lib/store/settings/webhooks";
import { publicLinks } from "@/lib/store/work/webhook-outbox";
import { testEvent } from "@/lib/domain/webhooks/events";
import { serverSecret } from "@/lib/webhooks/deliver";
import { readJsonBody } from "./body";
import { ApiError, validated } from "./errors";

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

/** Creates an endpoint; the answer carries its secret, the only time it is shown. */
export async function createEndpointFrom(req: Request, by: string): Promise<Endpoint & { secret: string }> {
  return createEndpointWith(await readJsonBody(req, WEBHOOK_BODY_LIMIT), by);
}

/** The same from a value already read (the settings page's form). */
export async function createEndpointWith(value: unknown, by: string): Promise<Endpoint & { secret: string }> {
  const input: EndpointCreate = parsed(value, endpointCreateSchema);
  checkEndpointUrl(input.url);
  const secret = newSecret();
  const endpoint = await createEndpoint(input, { sealed: sealSecret(secret, serverSecret()), hint: secretHint(secret) }, by);
  return { ...endpoint, secret };
}

export async function updateEndpointFrom(req: Request, id: string): Promise<Endpoint> {
  return updateEndpointWith(id, await readJsonBody(req, WEBHOOK_BODY_LIMIT));
}

export async function updateEndpointWith(id: string, value: unknown): Promise<Endpoint> {
  const patch: EndpointUpdate = parsed(value, endpointUpdateSchema);
  if (patch.url) checkEndpointUrl(patch.url);
  return updateEndpoint(id, patch);
}

/** "Send a test event" to one endpoint. */
export async function sendTest(endpointId: string, by: string) {
  return sendTestEvent(endpointId, testEvent(new Date().toISOString(), by, publicLinks()));
}
