import { z } from "zod";
import { validated } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { getEndpoint, listDeliveries } from "@/lib/store/settings/webhooks";

const query = z
  .object({
    limit: z.coerce.number().int().min(1).max(200).optional(),
    before: z.iso.datetime().optional(),
  })
  .strict();

/** The endpoint's delivery log, newest first: each delivery with every attempt (status, latency, excerpt). */
export const GET = apiRoute<{ endpointId: string }>("webhooks:manage", async ({ req, params }) => {
  const parsed = { data: validated(query, Object.fromEntries(new URL(req.url).searchParams), "query") };
  await getEndpoint(params.endpointId);
  const items = await listDeliveries(params.endpointId, parsed.data);
  const limit = parsed.data.limit ?? 50;
  return json({ items, next_before: items.length === limit ? items[items.length - 1].created_at : null });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
