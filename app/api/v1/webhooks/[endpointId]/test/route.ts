import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { testEvent } from "@/lib/domain/webhooks/events";
import { wakeJobs } from "@/lib/jobs/worker";
import { publicLinks } from "@/lib/store/webhook-outbox";
import { sendTestEvent } from "@/lib/store/webhooks";

/** "Send a test event": a `webhook.test` message to this endpoint alone, delivered like any other. */
export const POST = apiRoute<{ endpointId: string }>("webhooks:manage", async ({ params, principal }) => {
  const sent = await sendTestEvent(params.endpointId, testEvent(new Date().toISOString(), principal.email, publicLinks()));
  wakeJobs();
  return json(sent, 202);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");
