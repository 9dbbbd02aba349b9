/**
 * The production server answers POST /api/v1/receipts with a bearer token itself
 * (lib/cli/serve.ts → lib/api/ingest-node.ts) instead of through Next.js's route handler
 * (app/api/v1/receipts/route.ts), which still serves session cookies and `next dev`. The two
 * must be indistinguishable to a client: this test sends the same requests to the suite's
 * server and to a plain `next start` on the same database, and compares every answer.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { baseUrl, chainCount, principal, unique } from "@/lib/testing/integration";
import { freePort } from "@/lib/testing/ports";

let nextBase = "";
let child: ChildProcess | null = null;
let ingestToken = "";
/** One read-only token per server: a principal's refusals of one permission fold into one record per window (docs/AUDIT.md), so each server's refusal must be a first. */
const readTokens = { fast: "", next: "" };

beforeAll(async () => {
  ingestToken = (await principal("reviewer", ["ingest", "verify", "read"])).token;
  readTokens.fast = (await principal("viewer", ["read"])).token;
  readTokens.next = (await principal("viewer", ["read"])).token;
  const port = await freePort();
  nextBase = `http://127.0.0.1:${port}`;
  let log = "";
  child = spawn(process.execPath, [path.resolve("node_modules/next/dist/bin/next"), "start", "-p", String(port), "-H", "127.0.0.1"], {
    env: { ...process.env, DATABASE_URL: inject("databaseUrl"), AUTH_SECRET: "parity-secret-0123456789abcdef0123456789", NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`next start exited:\n${log}`);
    if (Date.now() > deadline) throw new Error(`next start did not become healthy:\n${log}`);
    try {
      if ((await fetch(`${nextBase}/api/health`)).ok) break;
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}, 90_000);

afterAll(() => {
  child?.kill("SIGTERM");
});

type Req = { token?: string; body: string | Uint8Array; contentType?: string };
const MiB = 1024 * 1024;

const record = (id: string, extra: Record<string, unknown> = {}) => ({
  operation_id: id,
  intent: { target: "social account", effect: "publish exactly one post", fingerprint: "sha256:abc" },
  receipt: { status: "accepted", receipt_id: `r-${id}`, observed_at: "2026-08-28T14:02:11Z" },
  canonical_read: { status: "absent", observed_at: "2026-08-28T14:31:02Z", evidence: "not shown" },
  side_effects: [{ name: "quota decremented", status: "observed" }],
  ...extra,
});

/** Each case builds its request from an operation id prefix, unique per server. */
const cases: [string, (id: string) => Req][] = [
  ["a new record (201)", (id) => ({ token: ingestToken, body: JSON.stringify(record(id)) })],
  ["a batch with an invalid item (207)", (id) => ({ token: ingestToken, body: JSON.stringify({ records: [record(`${id}-a`), { operation_id: `${id}-b` }, record(`${id}-c`)] }) })],
  ["a batch where an item conflicts with an earlier one (207 with 409)", (id) => ({
    token: ingestToken,
    body: JSON.stringify({ records: [record(id), record(id, { intent: { target: "other", effect: "other" } })] }),
  })],
  ["malformed JSON (400)", () => ({ token: ingestToken, body: '{"operation_id": "x",' })],
  ["an empty body (400)", () => ({ token: ingestToken, body: "" })],
  ["invalid UTF-8 (400)", () => ({ token: ingestToken, body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) })],
  ["a duplicate key (400)", (id) => ({ token: ingestToken, body: `{"operation_id":"${id}","operation_id":"${id}x","intent":{}}` })],
  ["no token (401)", (id) => ({ token: "", body: JSON.stringify(record(id)) })],
  ["an unknown token (401)", (id) => ({ token: "rcl_" + "A".repeat(43), body: JSON.stringify(record(id)) })],
  ["a malformed Authorization header (401)", (id) => ({ token: "two words", body: JSON.stringify(record(id)) })],
  ["a read-only token (403)", (id) => ({ token: id.startsWith("parity-fast") ? readTokens.fast : readTokens.next, body: JSON.stringify(record(id)) })],
  ["a wrong content type (415)", (id) => ({ token: ingestToken, body: JSON.stringify(record(id)), contentType: "text/plain" })],
  ["a 5 MiB body (413)", (id) => ({ token: ingestToken, body: JSON.stringify({ operation_id: id, intent: { effect: "x".repeat(5 * MiB) } }) })],
  ["a 2 MiB record (413)", (id) => ({ token: ingestToken, body: JSON.stringify({ operation_id: id, intent: { params: { a: "x".repeat(2 * MiB) } } }) })],
  ["501 records (413)", (id) => ({ token: ingestToken, body: JSON.stringify({ records: Array.from({ length: 501 }, (_, i) => record(`${id}-${i}`)) }) })],
  ["a record without a stage (422)", (id) => ({ token: ingestToken, body: JSON.stringify({ operation_id: id }) })],
  ["a __proto__ key (422)", (id) => ({ token: ingestToken, body: `{"operation_id":"${id}","intent":{"params":{"__proto__":{"a":1}}}}` })],
];

const COMPARED_HEADERS = ["content-type", "www-authenticate", "x-content-type-options", "referrer-policy", "permissions-policy", "x-frame-options"];

async function send(base: string, req: Req) {
  const headers: Record<string, string> = { "content-type": req.contentType ?? "application/json" };
  if (req.token === "two words") headers.authorization = "Token two words";
  else if (req.token) headers.authorization = `Bearer ${req.token}`;
  const res = await fetch(`${base}/api/v1/receipts`, { method: "POST", headers, body: req.body as BodyInit });
  const text = await res.text();
  return {
    status: res.status,
    headers: Object.fromEntries(COMPARED_HEADERS.map((h) => [h, res.headers.get(h)])),
    text,
  };
}

describe("the ingest fast path answers exactly as the Next.js route handler", () => {
  it.each(cases)("%s", async (_name, build) => {
    const fastId = unique("parity-fast");
    const nextId = unique("parity-next");
    const before = await chainCount();
    const fast = await send(baseUrl, build(fastId));
    const afterFast = await chainCount();
    const viaNext = await send(nextBase, build(nextId));
    const afterNext = await chainCount();
    // Each answer's own request id (both carry one in an error answer): the same placeholder.
    const normalise = (text: string, id: string) => text.split(id).join("<id>").replace(/"request_id":"[^"]+"/g, '"request_id":"<request-id>"');
    expect({ ...fast, text: normalise(fast.text, fastId) }).toEqual({ ...viaNext, text: normalise(viaNext.text, nextId) });
    // …and stores the same: as many chain records (stage records, or a refusal's security event).
    expect(afterFast - before).toBe(afterNext - afterFast);
  }, 60_000);

  it("a session-cookie or other-method request is not taken by the fast path: Next.js answers it", async () => {
    const get = await fetch(`${baseUrl}/api/v1/receipts`);
    const viaNext = await fetch(`${nextBase}/api/v1/receipts`);
    expect(get.status).toBe(viaNext.status);
    const cookieOnly = await fetch(`${baseUrl}/api/v1/receipts`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: "authjs.session-token=not-a-session" },
      body: JSON.stringify(record(unique("parity-cookie"))),
    });
    expect(cookieOnly.status).toBe(401);
    expect((await cookieOnly.json()).error.code).toBe("unauthenticated");
  });
});
