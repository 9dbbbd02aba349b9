import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { updateEndpointFrom } from "@/lib/api/webhooks";
import { deleteEndpoint, getEndpoint } from "@/lib/store/settings/webhooks";

type P = { endpointId: string };

export const GET = apiRoute<P>("webhooks:manage", async ({ params }) => json(await getEndpoint(params.endpointId)));

/** Change the URL, description, format, filters; `{"enabled": false}` disables it, `true` enables it again. */
export const PATCH = apiRoute<P>("webhooks:manage", async ({ req, params }) => json(await updateEndpointFrom(req, params.endpointId)));

export const DELETE = apiRoute<P>("webhooks:manage", async ({ params }) => {
  await deleteEndpoint(params.endpointId);
  return json({ deleted: params.endpointId });
});

export const { POST, PUT, OPTIONS } = otherMethods("GET", "PATCH", "DELETE");
