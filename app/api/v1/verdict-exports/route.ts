import { z } from "zod";
import { validated } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { listVerdictExports, verdictExportCounts, VERDICT_EXPORT_STATUSES } from "@/lib/store/queries/verdict-exports";
import { describeVerdictTarget } from "@/lib/verdicts/target";
import { can } from "@/lib/domain/permissions";

const query = z
  .object({
    status: z.enum(VERDICT_EXPORT_STATUSES).optional(),
    limit: z.coerce.number().int().min(1).max(200).optional(),
    before: z.iso.datetime().optional(),
  })
  .strict();

/**
 * The verdict export's delivery log (docs/API.md "Verdicts out"), newest first: the target (its
 * host, its whole URL for instance admins only, and its header names), how many events are pending, delivered and failed, and the events.
 * Admins, as for webhooks.
 */
export const GET = apiRoute("webhooks:manage", async ({ req, principal }) => {
  const q = validated(query, Object.fromEntries(new URL(req.url).searchParams), "query");
  const [items, counts] = await Promise.all([listVerdictExports(q), verdictExportCounts()]);
  const limit = q.limit ?? 50;
  return json({ target: describeVerdictTarget({ whole: can(principal, "instance:audit") }), counts, items, next_before: items.length === limit ? items[items.length - 1].created_at : null });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
