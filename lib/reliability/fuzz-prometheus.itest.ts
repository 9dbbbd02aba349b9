/**
 * Fuzz family for GET /metrics, the Prometheus scrape (lib/api/metrics-node.ts): random and
 * hostile query strings, Authorization headers, request ids, Accept headers and methods. Oracle:
 * never a 5xx; the query string changes nothing (one answer, every metric, parseable, and no
 * series carries what the client sent); only `Bearer <a metrics token>` gets the metrics, any
 * other credential 401 and a token without the scope 403, in the API's error shape with the
 * request's id; a request id is echoed only when it is a plain short token.
 */
import fc from "fast-check";
import parse from "parse-prometheus-text-format";
import { beforeAll, describe, expect, it } from "vitest";
import { baseUrl, principal } from "@/lib/testing/integration";

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
let token: string;
let readToken: string;
beforeAll(async () => {
  token = (await principal("admin", ["metrics"])).token;
  readToken = (await principal("admin", ["read"])).token;
});

const SANE_ID = /^[A-Za-z0-9._:-]{8,64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function scrape(query: string, headers: Record<string, string>, method = "GET") {
  const res = await fetch(`${baseUrl}/metrics${query}`, { method, headers, redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** An error answer in the API's shape, carrying the request's id. */
function expectError(a: Awaited<ReturnType<typeof scrape>>, status: number, label: string) {
  expect(a.status, label).toBe(status);
  const body = JSON.parse(a.text) as { error: { code: string; message: string; request_id: string } };
  expect(body.error.code, label).toEqual(expect.any(String));
  expect(body.error.message, label).toEqual(expect.any(String));
  expect(body.error.request_id, label).toBe(a.headers.get("x-request-id"));
}

const hostileText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom("", "%00", "\u0000", "💥".repeat(50), "x".repeat(4000), "__proto__", "name[]", "../../etc/passwd", "reconcile_ingest_records_total", '"}\n# TYPE evil counter\nevil 1'),
);
const queryArb = fc.array(fc.tuple(fc.oneof(hostileText, fc.constantFrom("name[]", "format", "__proto__", "job")), hostileText), { maxLength: 6 }).map((params) => {
  const q = new URLSearchParams(params).toString();
  return q ? `?${q}` : "";
});

describe("fuzz: GET /metrics", () => {
  it("any query string: the same full answer, parseable, echoing nothing", async () => {
    await fc.assert(
      fc.asyncProperty(queryArb, fc.constantFrom(undefined, "application/openmetrics-text; version=1.0.0", "*/*", "text/html", "\u00ff"), async (query, accept) => {
        const headers: Record<string, string> = { authorization: `Bearer ${token}` };
        if (accept) headers.accept = accept;
        const a = await scrape(query, headers);
        const label = `${query.slice(0, 200)} accept=${accept} → ${a.status} ${a.text.slice(0, 200)}`;
        expect(a.status, label).toBe(200);
        expect(a.headers.get("content-type"), label).toMatch(/^text\/plain; version=0\.0\.4/);
        const names = parse(a.text).map((f) => f.name);
        expect(names, label).toContain("reconcile_ingest_records_total");
        expect(names, label).toContain("reconcile_chain_head_seq");
        expect(names, label).not.toContain("evil");
        expect(a.text, label).not.toContain("etc/passwd");
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
  });

  it("any Authorization header: the metrics only for Bearer and a metrics token; 401 or 403 otherwise, never a 5xx", async () => {
    const credential = fc.oneof(
      fc.constant(() => `Bearer ${token}`),
      fc.constant(() => `bearer ${token}`),
      fc.constant(() => `Bearer  ${token}  `),
      fc.constant(() => `Bearer ${readToken}`),
      fc.constant(() => `Bearer ${token}x`),
      fc.constant(() => `Bearer ${token} ${token}`),
      fc.constant(() => `Basic ${Buffer.from(`a:${token}`).toString("base64")}`),
      fc.constant(() => `Bearer rcl_${"A".repeat(8000)}`),
      fc.string({ unit: fc.constantFrom(..."abcXYZ019 _-.:=/+"), maxLength: 80 }).map((s) => () => s),
      fc.string({ unit: fc.constantFrom(..."abc019_"), maxLength: 60 }).map((s) => () => `Bearer ${s}`),
    );
    await fc.assert(
      fc.asyncProperty(credential, async (make) => {
        const sent = make();
        const a = await scrape("", { authorization: sent });
        // What the server receives: the header's value without surrounding whitespace.
        const value = sent.trim();
        const label = `${JSON.stringify(value.slice(0, 80))} → ${a.status} ${a.text.slice(0, 200)}`;
        expect(a.status, label).toBeLessThan(500);
        const m = /^Bearer\s+(\S+)\s*$/i.exec(value);
        if (!value) {
          // No credential at all: the Metrics page's (sign in first), not the scrape.
          expect(a.status, label).toBe(307);
        } else if (m?.[1] === token) {
          expect(a.status, label).toBe(200);
          expect(parse(a.text).length, label).toBeGreaterThan(5);
        } else if (m?.[1] === readToken) {
          expectError(a, 403, label);
        } else {
          expectError(a, 401, label);
          expect(a.headers.get("www-authenticate"), label).toMatch(/^Bearer/);
        }
        expect(a.text, label).not.toContain(token);
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
  });

  it("any request id and method: a plain id echoed, anything else replaced; other methods 405 with Allow", async () => {
    const id = fc.oneof(fc.string({ maxLength: 80 }), fc.stringMatching(/^[A-Za-z0-9._:-]{1,70}$/), fc.constantFrom("a".repeat(64), "a".repeat(65), "abc def-123", "<script>", "req-\u00e9\u00e9\u00e9\u00e9\u00e9"));
    await fc.assert(
      fc.asyncProperty(id, fc.constantFrom("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"), async (sentId, method) => {
        // A header value may not hold control characters or non-Latin-1: fetch refuses those before sending.
        const sendable = /^[\t\x20-\x7e\x80-\xff]*$/.test(sentId) ? sentId.trim() : "";
        const headers: Record<string, string> = { authorization: `Bearer ${token}` };
        if (sendable) headers["x-request-id"] = sendable;
        const a = await scrape("", headers, method);
        const label = `${JSON.stringify(sendable)} ${method} → ${a.status} ${a.text.slice(0, 200)}`;
        const echoed = a.headers.get("x-request-id");
        if (SANE_ID.test(sendable)) expect(echoed, label).toBe(sendable);
        else expect(echoed, label).toMatch(UUID);
        if (method === "GET") expect(a.status, label).toBe(200);
        else if (method === "HEAD") expect([a.status, a.text], label).toEqual([200, ""]);
        else {
          expectError(a, 405, label);
          expect(a.headers.get("allow"), label).toBe("GET, HEAD");
        }
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
  });
});
