import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { rotateSecretFrom } from "@/lib/api/webhooks";

/**
 * A new signing secret, in this answer only; `{"overlap_hours"?: 0..168}` (default the server's
 * RECONCILE_WEBHOOK_SECRET_OVERLAP_HOURS, 24): how long the old one still signs too.
 */
export const POST = apiRoute<{ endpointId: string }>("webhooks:manage", async ({ req, params }) => json(await rotateSecretFrom(req, params.endpointId)));

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
