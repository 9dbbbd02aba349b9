import "server-only";
import { createClient } from "@arizeai/phoenix-client";
import { logSpanAnnotations } from "@arizeai/phoenix-client/spans";
import { phoenixAnnotation } from "@/lib/domain/verdicts/targets";
import type { VerdictEvent } from "@/lib/domain/verdicts/event";
import { guardedFetch } from "@/lib/outbound/guarded-fetch";
import type { PhoenixTarget } from "./target";
import { sendError, type SendResult } from "./send-result";

/**
 * Verdicts as Phoenix span annotations (docs/DEPLOY.md "Verdicts to Phoenix"), sent with the
 * official client `@arizeai/phoenix-client` (its logSpanAnnotations: POST /v1/span_annotations),
 * over the guarded outbound client (its `fetch` option), with the API key as Bearer auth. The
 * client reads no environment of its own here (PHOENIX_HOST, PHOENIX_API_KEY): only the target.
 * A job's events go in one request; Phoenix upserts each by (name, span, identifier).
 */
export async function sendToPhoenix(target: PhoenixTarget, events: VerdictEvent[]): Promise<SendResult> {
  const client = createClient({
    options: {
      baseUrl: target.baseUrl,
      headers: target.apiKey ? { Authorization: `Bearer ${target.apiKey}` } : {},
      fetch: guardedFetch(target.policy),
    },
    getEnvironmentOptions: () => ({}),
  });
  try {
    await logSpanAnnotations({ client, spanAnnotations: events.map(phoenixAnnotation) });
    return { error: null, status: 200 };
  } catch (e) {
    return sendError("Phoenix", "RECONCILE_VERDICT_PHOENIX_API_KEY", e);
  }
}
