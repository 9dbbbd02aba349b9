import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { createEndpointFrom } from "@/lib/api/webhooks";
import { listEndpoints } from "@/lib/store/settings/webhooks";

/** Webhook endpoints (docs/API.md "Webhooks"): admins, signed in. */
export const GET = apiRoute("webhooks:manage", async () => json({ items: await listEndpoints() }));

export const POST = apiRoute("webhooks:manage", async ({ req, principal }) => json(await createEndpointFrom(req, principal.email), 201));

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");
