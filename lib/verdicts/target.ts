import "server-only";
import { parseOtlpHeaders, verdictLogsUrl } from "@/lib/domain/verdicts/event";
import { envSetting } from "@/lib/domain/settings";
import { configuredVerdictTargets, TARGET_SETTING, type VerdictTargetKind } from "@/lib/domain/verdicts/targets";
import { checkUrl, OutboundRefused, outboundPolicy, type OutboundPolicy } from "@/lib/outbound/guarded-request";

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
 * Phoenix (RECONCILE_VERDICT_PHOENIX_URL: the server's base URL, as PHOENIX_HOST; optional
 * RECONCILE_VERDICT_PHOENIX_API_KEY, sent as `Authorization: Bearer …`) and Langfuse
 * (RECONCILE_VERDICT_LANGFUSE_URL: the base URL, as LANGFUSE_BASE_URL; RECONCILE_VERDICT_LANGFUSE_PUBLIC_KEY
 * and _SECRET_KEY). Their requests keep the same outbound rules (RECONCILE_VERDICT_ALLOW_HTTP /
 * _ALLOW_PRIVATE), the URL's host alone allowed, with the same deadline.
 */
export type PhoenixTarget = { baseUrl: string; apiKey: string | null; timeoutMs: number; policy: OutboundPolicy };
export type LangfuseTarget = { baseUrl: string; publicKey: string; secretKey: string; timeoutMs: number; policy: OutboundPolicy };

const baseOf = (raw: string) => raw.trim().replace(/\/+$/, "");

function policyFor(url: string): OutboundPolicy {
  const host = hostOf(url);
  return outboundPolicy("verdict", host ? [host] : [], { timeoutMs: envSetting("RECONCILE_VERDICT_OTLP_TIMEOUT_MS") });
}

export function phoenixTarget(env: NodeJS.ProcessEnv = process.env): PhoenixTarget | null {
  const raw = env.RECONCILE_VERDICT_PHOENIX_URL?.trim();
  if (!raw) return null;
  const baseUrl = baseOf(raw);
  const policy = policyFor(baseUrl);
  return { baseUrl, apiKey: env.RECONCILE_VERDICT_PHOENIX_API_KEY?.trim() || null, timeoutMs: policy.timeoutMs!, policy };
}

export function langfuseTarget(env: NodeJS.ProcessEnv = process.env): LangfuseTarget | null {
  const raw = env.RECONCILE_VERDICT_LANGFUSE_URL?.trim();
  if (!raw) return null;
  const baseUrl = baseOf(raw);
  const policy = policyFor(baseUrl);
  return { baseUrl, publicKey: env.RECONCILE_VERDICT_LANGFUSE_PUBLIC_KEY?.trim() ?? "", secretKey: env.RECONCILE_VERDICT_LANGFUSE_SECRET_KEY?.trim() ?? "", timeoutMs: policy.timeoutMs!, policy };
}

/** The URL each configured target sends to (the OTLP logs URL, Phoenix's and Langfuse's base URL). */
function targetUrl(kind: VerdictTargetKind, env: NodeJS.ProcessEnv): string {
  if (kind === "otlp") return verdictLogsUrl(env.RECONCILE_VERDICT_OTLP_ENDPOINT ?? "");
  return baseOf(env[TARGET_SETTING[kind]] ?? "");
}

/**
 * Why a configured target cannot be used (checked when the server starts, so a typo stops the
 * start instead of failing every export): each problem names the setting and the outbound rule
 * it fails (`scheme_not_allowed`, `private_address`, …).
 */
export function verdictTargetProblems(env: NodeJS.ProcessEnv = process.env): string[] {
  const problems: string[] = [];
  for (const kind of configuredVerdictTargets(env)) {
    const url = targetUrl(kind, env);
    try {
      checkUrl(url, { ...outboundPolicy("verdict", [hostOf(url)]), allowHttp: env.RECONCILE_VERDICT_ALLOW_HTTP === "1", allowPrivate: env.RECONCILE_VERDICT_ALLOW_PRIVATE === "1" });
    } catch (e) {
      problems.push(`${TARGET_SETTING[kind]}: ${e instanceof OutboundRefused ? `${e.code}: ` : ""}${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (env.RECONCILE_VERDICT_LANGFUSE_URL?.trim() && !(env.RECONCILE_VERDICT_LANGFUSE_PUBLIC_KEY?.trim() && env.RECONCILE_VERDICT_LANGFUSE_SECRET_KEY?.trim())) {
    problems.push("RECONCILE_VERDICT_LANGFUSE_URL is set without RECONCILE_VERDICT_LANGFUSE_PUBLIC_KEY and RECONCILE_VERDICT_LANGFUSE_SECRET_KEY (the project's API keys): Langfuse refuses a score without them");
  }
  return problems;
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

/**
 * Every target as the delivery log shows it: never an API key or a header's value; the whole URL
 * for instance admins only (`whole`), its host for a project's admins (as the OTLP endpoint).
 */
export function describeVerdictTargets(opts: { whole: boolean }, env: NodeJS.ProcessEnv = process.env) {
  const show = (url: string) => ({ url: opts.whole ? url : null, host: hostOf(url) });
  const phoenix = phoenixTarget(env);
  const langfuse = langfuseTarget(env);
  return [
    { kind: "otlp" as const, ...describeVerdictTarget(opts, env) },
    phoenix
      ? { kind: "phoenix" as const, enabled: true, ...show(phoenix.baseUrl), api_key_set: Boolean(phoenix.apiKey), needs_span: true }
      : { kind: "phoenix" as const, enabled: false, url: null, host: null, api_key_set: false, needs_span: true },
    langfuse
      ? { kind: "langfuse" as const, enabled: true, ...show(langfuse.baseUrl), keys_set: Boolean(langfuse.publicKey && langfuse.secretKey), needs_span: true }
      : { kind: "langfuse" as const, enabled: false, url: null, host: null, keys_set: false, needs_span: true },
  ];
}
