import "server-only";
import { parseOtlpHeaders, verdictLogsUrl } from "@/lib/domain/verdicts/event";
import { envSetting } from "@/lib/domain/settings";
import { checkUrl, outboundPolicy, type OutboundPolicy } from "@/lib/outbound/guarded-request";

/**
 * Where verdict events go (docs/API.md "Verdicts out"): RECONCILE_VERDICT_OTLP_ENDPOINT (a base URL
 * under which /v1/logs is used, or the full logs URL), RECONCILE_VERDICT_OTLP_HEADERS (as
 * OTEL_EXPORTER_OTLP_HEADERS: `key=value,…`, values percent-encoded), RECONCILE_VERDICT_OTLP_TIMEOUT_MS
 * (10 s), and the outbound allowances RECONCILE_VERDICT_ALLOW_HTTP / _ALLOW_PRIVATE.
 */
export type VerdictTarget = { url: string; headers: Record<string, string>; timeoutMs: number; policy: OutboundPolicy };

/** The target the environment names, or null when verdicts are not exported. */
export function verdictTarget(env: NodeJS.ProcessEnv = process.env): VerdictTarget | null {
  const endpoint = env.RECONCILE_VERDICT_OTLP_ENDPOINT?.trim();
  if (!endpoint) return null;
  const url = verdictLogsUrl(endpoint);
  const host = hostOf(url);
  const timeoutMs = envSetting("RECONCILE_VERDICT_OTLP_TIMEOUT_MS");
  return { url, headers: parseOtlpHeaders(env.RECONCILE_VERDICT_OTLP_HEADERS), timeoutMs, policy: outboundPolicy("verdict", host ? [host] : [], { timeoutMs }) };
}

/** The URL's host, the one the export may reach ("" for text that is no URL: checkUrl says why). */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return "";
  }
}

/**
 * Why the configured endpoint cannot be used (checked when the server starts, so a typo stops
 * the start instead of failing every export), or null.
 */
export function verdictTargetProblem(env: NodeJS.ProcessEnv = process.env): string | null {
  const endpoint = env.RECONCILE_VERDICT_OTLP_ENDPOINT?.trim();
  if (!endpoint) return null;
  const url = verdictLogsUrl(endpoint);
  try {
    checkUrl(url, outboundPolicy("verdict", [hostOf(url)]));
    return null;
  } catch (e) {
    return `RECONCILE_VERDICT_OTLP_ENDPOINT: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/**
 * What the delivery log shows of the target: never a header's value (they hold credentials). The
 * endpoint is the instance's, set by its operator, and its path or query string may hold a
 * credential too: its whole URL is shown to instance admins (`whole`), a project's admins see
 * its host only (issue 47; `url` null).
 */
export function describeVerdictTarget(opts: { whole: boolean }, env: NodeJS.ProcessEnv = process.env) {
  const t = verdictTarget(env);
  if (!t) return { enabled: false as const, url: null, host: null, header_names: [] as string[], allow_http: false, allow_private: false };
  return { enabled: true as const, url: opts.whole ? t.url : null, host: hostOf(t.url), header_names: Object.keys(t.headers), allow_http: t.policy.allowHttp, allow_private: t.policy.allowPrivate };
}
