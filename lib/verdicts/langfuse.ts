import "server-only";
import { LangfuseClient } from "@langfuse/client";
import { EVALUATION_NAME, langfuseScoreId, phoenixAnnotation } from "@/lib/domain/verdicts/targets";
import type { VerdictEvent } from "@/lib/domain/verdicts/event";
import { guardedFetch } from "@/lib/outbound/guarded-fetch";
import { OutboundRefused } from "@/lib/outbound/guarded-request";
import { withFetch } from "@/lib/outbound/scoped-fetch";
import type { LangfuseTarget } from "./target";
import { sendError, type SendResult } from "./send-result";

/**
 * Verdicts as Langfuse scores (docs/DEPLOY.md "Verdicts to Langfuse"), sent with the official
 * client `@langfuse/client` (its REST client `api.scores.create`: POST /api/public/scores, Basic
 * auth with the project's public and secret key): one score per operation, on the observation
 * Langfuse's OpenTelemetry ingestion made of the tool call's span (traceId and observationId are
 * the OTel ids in hex), named `reconcile.outcome`, CATEGORICAL, the outcome as its value, the
 * reason as its comment, its id derived from the operation so a later verdict updates it.
 *
 * The Langfuse client takes no custom fetch (its generated REST client calls the global `fetch`;
 * neither LangfuseClient nor @langfuse/core's LangfuseAPIClient has a fetch or fetcher option), so
 * its calls run in a scope in which the global fetch is the guarded outbound client
 * (lib/outbound/scoped-fetch.ts: every other fetch in the process is left as it was). The client
 * turns a fetch's rejection into a message, so the scope keeps the outbound refusal itself to say
 * its rule in the delivery log. The client's own retries are off: the outbox's schedule is the only one.
 */

/** The score of one verdict, as the Langfuse REST client's CreateScoreRequest. */
export function langfuseScore(e: VerdictEvent) {
  const a = phoenixAnnotation(e);
  return {
    id: langfuseScoreId(e),
    traceId: e.trace_id,
    observationId: e.span_id,
    name: EVALUATION_NAME,
    value: a.label,
    dataType: "CATEGORICAL" as const,
    comment: a.explanation,
    metadata: a.metadata,
  };
}

export async function sendToLangfuse(target: LangfuseTarget, events: VerdictEvent[]): Promise<SendResult> {
  const client = new LangfuseClient({ publicKey: target.publicKey, secretKey: target.secretKey, baseUrl: target.baseUrl, timeout: target.timeoutMs / 1000 });
  const guarded = guardedFetch(target.policy);
  let refused: OutboundRefused | null = null;
  const keepRefusal: typeof fetch = (input, init) =>
    guarded(input, init).catch((e: unknown) => {
      if (e instanceof OutboundRefused) refused = e;
      throw e;
    });
  try {
    await withFetch(keepRefusal, async () => {
      for (const e of events) await client.api.scores.create(langfuseScore(e), { maxRetries: 0, timeoutInSeconds: target.timeoutMs / 1000 });
    });
    return { error: null, status: 200 };
  } catch (e) {
    return sendError("Langfuse", "RECONCILE_VERDICT_LANGFUSE_PUBLIC_KEY and _SECRET_KEY", refused ?? e);
  }
}
