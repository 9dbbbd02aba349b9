import { z } from "zod";
import { EFFECTIVE_OUTCOMES } from "../outcomes";
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES, type WebhookEvent } from "./events";

/**
 * A webhook endpoint's settings as an admin gives them (`/api/v1/webhooks`, `/settings/webhooks`).
 * An empty list means "any": an endpoint with no event types gets every type.
 */
export const ENDPOINT_FORMATS = ["standard", "slack"] as const;
export type EndpointFormat = (typeof ENDPOINT_FORMATS)[number];

export const MAX_FILTER_VALUES = 50;
const name = z.string().trim().min(1).max(200);
const list = <T extends z.ZodType>(item: T) => z.array(item).max(MAX_FILTER_VALUES, `at most ${MAX_FILTER_VALUES} values`);

export const endpointFiltersSchema = z
  .object({
    event_types: list(z.enum(WEBHOOK_EVENT_TYPES)).default([]),
    tools: list(name).default([]),
    outcomes: list(z.enum(EFFECTIVE_OUTCOMES)).default([]),
    agents: list(name).default([]),
  })
  .strict();
export type EndpointFilters = z.infer<typeof endpointFiltersSchema>;

const url = z
  .string()
  .trim()
  .max(2000)
  .refine((u) => URL.canParse(u) && ["https:", "http:"].includes(new URL(u).protocol), "a URL starting with https:// (http:// only where allowed)");

export const endpointCreateSchema = z
  .object({
    url,
    description: z.string().trim().max(500).default(""),
    format: z.enum(ENDPOINT_FORMATS).default("standard"),
    enabled: z.boolean().default(true),
    filters: endpointFiltersSchema.default({ event_types: [], tools: [], outcomes: [], agents: [] }),
  })
  .strict();
export type EndpointCreate = z.infer<typeof endpointCreateSchema>;

export const endpointUpdateSchema = z
  .object({
    url: url.optional(),
    description: z.string().trim().max(500).optional(),
    format: z.enum(ENDPOINT_FORMATS).optional(),
    enabled: z.boolean().optional(),
    filters: endpointFiltersSchema.optional(),
  })
  .strict();
export type EndpointUpdate = z.infer<typeof endpointUpdateSchema>;

/**
 * Whether an endpoint wants an event. Event types always count; the tool, outcome and agent
 * filters judge events about an operation (checkpoints and chain failures pass them). The
 * test event goes only where it is sent, never by subscription.
 */
export function wants(filters: EndpointFilters, event: Pick<WebhookEvent, "type" | "facets" | "operationId">): boolean {
  if (event.type === TEST_EVENT_TYPE) return false;
  if (filters.event_types.length && !filters.event_types.includes(event.type)) return false;
  if (event.operationId === null) return true;
  const f = event.facets;
  if (filters.tools.length && !(f.tool !== null && filters.tools.includes(f.tool))) return false;
  if (filters.agents.length && !(f.agent !== null && filters.agents.includes(f.agent))) return false;
  if (filters.outcomes.length && !(f.outcome !== null && filters.outcomes.includes(f.outcome))) return false;
  return true;
}
