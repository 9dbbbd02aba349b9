import { z } from "zod";
import { validated } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { listVerdictExports, verdictExportCounts, VERDICT_EXPORT_STATUSES, VERDICT_TARGET_KINDS } from "@/lib/store/queries/verdict-exports";
import { describeVerdictTarget, describeVerdictTargets } from "@/lib/verdicts/target";
import { can } from "@/lib/domain/permissions";

const query = z
  .object({
    status: z.enum(VERDICT_EXPORT_STATUSES).optional(),
    target: z.enum(VERDICT_TARGET_KINDS).optional(),
    limit: z.coerce.number().int().min(1).max(200).optional(),
    before: z.iso.datetime().optional(),
  })
  .strict();

/**
 * The verdict export's delivery log (docs/API.md "Verdicts out"), newest first: the OTLP target
 * (`target`: its host, its whole URL for instance admins only, and its header names) and every
 * target (`targets`: OTLP, Phoenix, Langfuse; never a key), how many events are pending,
 * delivered, failed, not exportable (no span for Phoenix or Langfuse) and superseded, in all and
 * per target, and the events (each with its target), filtered by `status` and `target`.
 * Admins, as for webhooks.
 */
export const GET = apiRoute("webhooks:manage", async ({ req, principal }) => {
  const q = validated(query, Object.fromEntries(new URL(req.url).searchParams), "query");
  const [items, counts] = await Promise.all([listVerdictExports(q), verdictExportCounts()]);
  const limit = q.limit ?? 50;
  const whole = can(principal, "instance:audit");
  return json({ target: describeVerdictTarget({ whole }), targets: describeVerdictTargets({ whole }), counts, items, next_before: items.length === limit ? items[items.length - 1].created_at : null });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
