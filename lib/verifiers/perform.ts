import "server-only";
import type { VerifierDefinition } from "@/lib/domain/verifier";
import { judgeResponse, responseExcerpt, type Judgement, type ShownRequest } from "@/lib/domain/verifier-check";
import { maskSecrets, renderRequest, TemplateError, type SecretSource, type TemplateContext } from "@/lib/domain/verifier-template";
import { verifierSecretsFor } from "./secrets";
import { guardedRequest, outboundPolicy, OutboundRefused, type OutboundRefusal } from "@/lib/outbound/guarded-request";
import { envSetting } from "@/lib/domain/settings";

/**
 * One check: fill the request from the operation, send it through the one guarded HTTP client
 * (outboundPolicy("verifier", allow_hosts): VERIFIERS.md "No SSRF"), judge the answer. Used by
 * the scheduled checks (run.ts) and the dry run alike; records nothing.
 */

export type Performed =
  | {
      kind: "answered";
      request: ShownRequest;
      http_status: number;
      judgement: Judgement;
      excerpt: ReturnType<typeof responseExcerpt>;
      content_type: string | null;
      redirects: string[];
      ms: number;
      /** No rule decided and the service answered 5xx, 429 or 408: worth asking again later. */
      retryable: boolean;
    }
  | {
      kind: "failed";
      /** The request as shown, or null when it could not even be filled in. */
      request: ShownRequest | null;
      /** template: the operation lacks a value, or a secret is not set; otherwise the guarded client's refusal. */
      code: OutboundRefusal | "template" | "error";
      error: string;
      /** Timeouts, network errors and refusals may pass; a template that cannot be filled will not. */
      retryable: boolean;
    };

/** RECONCILE_VERIFIER_TIMEOUT_MS: the whole exchange's deadline (default 10 s, as VERIFIERS.md says). */
export function verifierTimeoutMs(): number {
  return envSetting("RECONCILE_VERIFIER_TIMEOUT_MS");
}

/** `secrets`: where {env.NAME} and {secret.NAME} are read (by default, as lib/verifiers/secrets.ts says). */
export async function performCheck(def: VerifierDefinition, ctx: TemplateContext, secrets?: SecretSource): Promise<Performed> {
  let rendered;
  try {
    secrets ??= await verifierSecretsFor(def);
    rendered = renderRequest(def.request, ctx, secrets);
  } catch (e) {
    if (e instanceof TemplateError) return { kind: "failed", request: null, code: "template", error: e.message, retryable: false };
    throw e;
  }
  const mask = (t: string) => maskSecrets(t, rendered.secrets);
  const policy = outboundPolicy("verifier", def.allow_hosts, { timeoutMs: verifierTimeoutMs() });
  try {
    const res = await guardedRequest(rendered.send, policy);
    const judgement = judgeResponse(def, ctx, res);
    if (judgement.error) judgement.error = mask(judgement.error);
    // Evidence is taken from the answer, which may echo a secret (a "self" link repeating an api key).
    if (judgement.evidence) judgement.evidence = Object.fromEntries(Object.entries(judgement.evidence).map(([k, v]) => [k, mask(v)]));
    return {
      kind: "answered",
      request: rendered.shown,
      http_status: res.status,
      judgement,
      excerpt: responseExcerpt(res.body, rendered.secrets),
      content_type: res.headers["content-type"] ?? null,
      redirects: res.redirects.map(mask),
      ms: res.ms,
      retryable: judgement.rule === null && (res.status >= 500 || res.status === 429 || res.status === 408),
    };
  } catch (e) {
    if (e instanceof OutboundRefused) return { kind: "failed", request: rendered.shown, code: e.code, error: mask(e.message), retryable: true };
    return { kind: "failed", request: rendered.shown, code: "error", error: mask(e instanceof Error ? e.message : String(e)), retryable: true };
  }
}
