import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { wakeJobs } from "@/lib/jobs/worker";
import { redeliver } from "@/lib/store/settings/webhooks";

/** Redeliver: the same message (the same webhook-id) again, from the first attempt of the schedule. */
export const POST = apiRoute<{ endpointId: string; deliveryId: string }>("webhooks:manage", async ({ params }) => {
  const sent = await redeliver(params.endpointId, params.deliveryId);
  wakeJobs();
  return json(sent, 202);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
