import type { EndpointFilters, EndpointFormat } from "@/lib/domain/webhooks/endpoint";

/**
 * Webhook endpoints and their delivery log as read (docs/API.md "Webhooks"): what the API answers
 * and the settings page shows. Shapes only: lib/store/settings/webhooks.ts makes them.
 */
export type Endpoint = {
  id: string;
  url: string;
  description: string;
  format: EndpointFormat;
  filters: EndpointFilters;
  /** The secret's first characters: the secret itself is shown once, at creation or rotation. */
  secret_hint: string;
  /** When the secret was last rotated (null: the endpoint's first secret). */
  secret_rotated_at: string | null;
  /** The secret a rotation replaced while it still signs (a second signature), and until when; null otherwise. */
  previous_secret: { hint: string; accepted_until: string } | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
};

export type Attempt = { n: number; at: string; status_code: number | null; ms: number; excerpt: string; error: string | null };

export type Delivery = {
  id: string;
  /** The message's id: the webhook-id header, the same on every attempt and redelivery. */
  webhook_id: string;
  type: string;
  status: "pending" | "delivered" | "failed" | "cancelled";
  attempts: number;
  next_at: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  attempt_log: Attempt[];
};
