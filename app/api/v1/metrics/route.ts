import { validated } from "@/lib/api/errors";
import { apiRoute, json, otherMethods } from "@/lib/api/route";
import { metricsQuerySchema, readMetrics } from "@/lib/store/queries/metrics";

/** The paper's Metrics 1–5 (docs/DOMAIN.md "The paper's metrics"), overall, per tool, per agent and per week. */
export const GET = apiRoute("operations:read", async ({ req }) => {
  const params = Object.fromEntries(new URL(req.url).searchParams);
  return json(await readMetrics(validated(metricsQuerySchema, params, "query")));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");
