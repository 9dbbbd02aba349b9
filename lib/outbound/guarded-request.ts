import "server-only";
import dns from "node:dns";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import net from "node:net";
import { hostAllowed, privateAddressReason } from "./address-policy";

/**
 * The one client for HTTP requests Reconcile makes on its own (verifiers' reads, webhooks'
 * deliveries), with the rules of VERIFIERS.md "No SSRF":
 *   - only https, and http where the policy allows it (tests, a receiver on the same network);
 *   - only hosts in the allowlist;
 *   - the resolved address must not be loopback, private, link-local, metadata or otherwise
 *     special-purpose unless the policy allows private addresses. It is checked inside the
 *     socket's own DNS lookup, so the address checked is the address connected to (no window
 *     for DNS rebinding); IP literals are checked before connecting;
 *   - redirects are followed only to the same host (and the same rules), at most maxRedirects;
 *   - one deadline for the whole exchange, and a cap on the response body.
 * Every refusal is an OutboundRefused with a code and a sentence a user can act on.
 */

export type OutboundKind = "verifier" | "webhook" | "verdict";

export type OutboundPolicy = {
  allowHosts: string[];
  allowHttp: boolean;
  allowPrivate: boolean;
  /** The whole exchange, connect to last byte (ms). */
  timeoutMs?: number;
  /** The response body's cap (bytes). */
  maxBytes?: number;
  maxRedirects?: number;
  /** Names the settings in refusal messages. */
  kind?: OutboundKind;
};

export type OutboundRequest = { method: string; url: string; headers?: Record<string, string>; body?: string };

export type OutboundResponse = {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered (after same-host redirects). */
  url: string;
  redirects: string[];
  ms: number;
};

export type OutboundRefusal =
  | "bad_url"
  | "scheme_not_allowed"
  | "host_not_allowed"
  | "private_address"
  | "cross_host_redirect"
  | "too_many_redirects"
  | "timeout"
  | "too_large"
  | "network";

export class OutboundRefused extends Error {
  constructor(
    readonly code: OutboundRefusal,
    message: string,
  ) {
    super(message);
    this.name = "OutboundRefused";
  }
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REDIRECTS = 3;

/** The policy for `kind` from the environment: RECONCILE_{VERIFIER,WEBHOOK}_ALLOW_{HTTP,PRIVATE}=1. */
export function outboundPolicy(kind: OutboundKind, allowHosts: string[], overrides: Partial<OutboundPolicy> = {}): OutboundPolicy {
  const prefix = settingPrefix(kind);
  return {
    allowHosts,
    allowHttp: process.env[`${prefix}_ALLOW_HTTP`] === "1",
    allowPrivate: process.env[`${prefix}_ALLOW_PRIVATE`] === "1",
    kind,
    ...overrides,
  };
}

/** Whose settings allow http and private addresses: RECONCILE_VERIFIER_…, RECONCILE_WEBHOOK_…, RECONCILE_VERDICT_…. */
const settingPrefix = (kind: OutboundKind | undefined) => (kind === "webhook" ? "RECONCILE_WEBHOOK" : kind === "verdict" ? "RECONCILE_VERDICT" : "RECONCILE_VERIFIER");

function setting(policy: OutboundPolicy, what: "HTTP" | "PRIVATE"): string {
  return `${settingPrefix(policy.kind)}_ALLOW_${what}=1`;
}

/** Checks a URL against the scheme and host rules; returns it parsed. */
export function checkUrl(raw: string, policy: OutboundPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused("bad_url", `"${raw.slice(0, 200)}" is not an absolute URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new OutboundRefused("scheme_not_allowed", `${url.protocol.replace(/:$/, "")} URLs are not allowed: only https`);
  }
  if (url.protocol === "http:" && !policy.allowHttp) {
    throw new OutboundRefused("scheme_not_allowed", `plain http to ${url.host} is not allowed: only https (${setting(policy, "HTTP")} allows http, for tests)`);
  }
  if (url.username || url.password) throw new OutboundRefused("bad_url", "URLs with credentials in them are not allowed: put secrets in headers from {env.NAME}");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!hostAllowed(host, policy.allowHosts)) {
    const list = policy.allowHosts.length ? policy.allowHosts.join(", ") : "nothing";
    throw new OutboundRefused("host_not_allowed", `${host} is not in the allowed hosts (${list})`);
  }
  if (net.isIP(host) && !policy.allowPrivate) {
    const why = privateAddressReason(host);
    if (why) throw new OutboundRefused("private_address", `${host} may not be reached: ${why} (${setting(policy, "PRIVATE")} allows it)`);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

class PrivateAddress extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
    readonly why: string,
  ) {
    super(`${host} resolved to ${address}: ${why}`);
  }
}

/**
 * dns.lookup that refuses (every answer is checked) hosts resolving to non-public addresses.
 * Exported for a client that brings its own HTTP transport (the OpenTelemetry exporter of
 * lib/verdicts/): its agent connects only where this lookup lets it.
 */
export function checkedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => {
    dns.lookup(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      if (!allowPrivate) {
        const list = Array.isArray(address) ? address : [{ address, family }];
        for (const a of list) {
          const why = privateAddressReason(a.address);
          if (why) return callback(new PrivateAddress(hostname, a.address, why) as NodeJS.ErrnoException, "", 0);
        }
      }
      callback(null, address, family);
    });
  };
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Makes the request under `policy`, following same-host redirects. */
export async function guardedRequest(req: OutboundRequest, policy: OutboundPolicy): Promise<OutboundResponse> {
  const started = performance.now();
  const timeoutMs = policy.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const maxRedirects = policy.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let url = checkUrl(req.url, policy);
  const firstHost = url.hostname.toLowerCase();
  let method = req.method.toUpperCase();
  let body = req.body;
  const redirects: string[] = [];
  for (;;) {
    const res = await exchange(url, method, req.headers ?? {}, body, policy, deadline, timeoutMs);
    const location = res.headers.location;
    if (!REDIRECTS.has(res.status) || !location) {
      return { ...res, url: url.toString(), redirects, ms: Math.round(performance.now() - started) };
    }
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new OutboundRefused("bad_url", `${url.host} redirected to "${location.slice(0, 200)}", which is not a URL`);
    }
    if (next.hostname.toLowerCase() !== firstHost) {
      throw new OutboundRefused("cross_host_redirect", `${url.host} redirected to another host (${next.host}): redirects are followed only to the same host`);
    }
    if (redirects.length >= maxRedirects) throw new OutboundRefused("too_many_redirects", `more than ${maxRedirects} redirects, the last to ${next}`);
    url = checkUrl(next.toString(), policy);
    redirects.push(url.toString());
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
      method = "GET";
      body = undefined;
    }
  }
}

type Exchanged = { status: number; headers: Record<string, string>; body: Buffer };

function exchange(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  policy: OutboundPolicy,
  deadline: AbortSignal,
  timeoutMs: number,
): Promise<Exchanged> {
  const maxBytes = policy.maxBytes ?? DEFAULT_MAX_BYTES;
  const payload = body === undefined ? undefined : Buffer.from(body);
  return new Promise<Exchanged>((resolve, reject) => {
    if (deadline.aborted) return reject(timedOut(url, timeoutMs));
    const lib = url.protocol === "https:" ? https : http;
    const outHeaders: Record<string, string> = { ...headers };
    if (payload) outHeaders["content-length"] = String(payload.length);
    let settled = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener("abort", onAbort);
      request.destroy();
      reject(e);
    };
    const onAbort = () => fail(timedOut(url, timeoutMs));
    const request = lib.request(
      url,
      { method, headers: outHeaders, agent: false, lookup: checkedLookup(policy.allowPrivate) as never },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) return fail(new OutboundRefused("too_large", `${url.host} answered with more than ${maxBytes} bytes; the response was cut off`));
          chunks.push(chunk);
        });
        res.on("error", (e) => fail(networkError(url, e, policy)));
        res.on("end", () => {
          if (settled) return;
          settled = true;
          deadline.removeEventListener("abort", onAbort);
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
          resolve({ status: res.statusCode ?? 0, headers: out, body: Buffer.concat(chunks) });
        });
      },
    );
    deadline.addEventListener("abort", onAbort, { once: true });
    request.on("error", (e) => fail(networkError(url, e, policy)));
    request.end(payload);
  });
}

function timedOut(url: URL, ms: number): OutboundRefused {
  return new OutboundRefused("timeout", `${url.host} did not answer within ${ms / 1000} s`);
}

function networkError(url: URL, e: Error, policy: OutboundPolicy): OutboundRefused {
  if (e instanceof PrivateAddress) {
    return new OutboundRefused("private_address", `${e.host} resolved to ${e.address}, which may not be reached: ${e.why} (${setting(policy, "PRIVATE")} allows it)`);
  }
  const code = (e as NodeJS.ErrnoException).code;
  return new OutboundRefused("network", `${url.host} could not be reached: ${code ? `${code} ` : ""}${e.message}`.trim());
}
