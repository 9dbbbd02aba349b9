import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { sendTest } from "@/lib/api/webhooks";
import { wakeJobs } from "@/lib/jobs/worker";

/** "Send a test event": a `webhook.test` message to this endpoint alone, delivered like any other. */
export const POST = apiRoute<{ endpointId: string }>("webhooks:manage", async ({ params, principal }) => {
  const sent = await sendTest(params.endpointId, principal.email);
  wakeJobs();
  return json(sent, 202);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
