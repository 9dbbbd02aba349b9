import { beforeAll, describe, expect, it } from "vitest";
import { baseUrl, chainCount, principal } from "@/lib/testing/integration";

/** Wrong methods and unknown paths under /api/v1 answer in the documented JSON error shape. */
let token: string;

beforeAll(async () => {
  token = (await principal("admin", ["ingest", "read", "review", "export"])).token;
});

async function send(method: string, path: string, opts: { auth?: boolean; body?: string } = {}) {
  const headers: Record<string, string> = opts.auth === false ? {} : { authorization: `Bearer ${token}` };
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(baseUrl + path, { method, headers, body: opts.body });
  const text = await res.text();
  return { status: res.status, allow: res.headers.get("allow"), type: res.headers.get("content-type"), body: text ? JSON.parse(text) : null };
}

describe("methods a route does not take", () => {
  it.each([
    ["PUT", "/api/v1/operations/op-1", "GET, HEAD"],
    ["DELETE", "/api/v1/operations/op-1", "GET, HEAD"],
    ["POST", "/api/v1/operations", "GET, HEAD"],
    ["GET", "/api/v1/receipts", "POST"],
    ["PATCH", "/api/v1/receipts", "POST"],
    ["GET", "/api/v1/operations/op-1/corrections", "POST"],
    ["PUT", "/api/v1/operations/op-1/claim", "GET, HEAD, POST, DELETE"],
    ["DELETE", "/api/v1/operations/op-1/comments", "GET, HEAD, POST"],
    ["POST", "/api/v1/audit/export", "GET, HEAD"],
  ])("%s %s is a 405 naming what it takes, in the JSON error shape", async (method, path, allow) => {
    const before = await chainCount();
    const r = await send(method, path, method === "GET" ? {} : { body: '{"operation_id":"op-405"}' });
    expect(r.status).toBe(405);
    expect(r.allow).toBe(allow);
    expect(r.type).toMatch(/^application\/json/);
    expect(r.body.error.code).toBe("method_not_allowed");
    expect(r.body.error.message).toContain(`not ${method}`);
    expect(await chainCount()).toBe(before);
  });

  it("OPTIONS says what is allowed; without a token every such answer is a 401 first", async () => {
    expect(await send("OPTIONS", "/api/v1/receipts")).toMatchObject({ status: 204, allow: "POST, OPTIONS" });
    expect(await send("OPTIONS", "/api/v1/operations")).toMatchObject({ status: 204, allow: "GET, HEAD, OPTIONS" });
    const anonymous = await send("PUT", "/api/v1/operations/op-1", { auth: false, body: "{}" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe("unauthenticated");
  });
});

describe("paths no route serves", () => {
  it.each([
    ["GET", "/api/v1/nope"],
    ["POST", "/api/v1/receipt"],
    ["GET", "/api/v1/operations/op-1/timeline"],
    ["DELETE", "/api/v1/audit"],
  ])("%s %s is a JSON 404, not the HTML page", async (method, path) => {
    const r = await send(method, path, method === "GET" ? {} : { body: "{}" });
    expect(r.status).toBe(404);
    expect(r.type).toMatch(/^application\/json/);
    expect(r.body.error).toMatchObject({ code: "not_found" });
    expect(r.body.error.message).toContain(path);
  });

  it("without a token, a 401 like every API answer", async () => {
    const r = await send("GET", "/api/v1/nope", { auth: false });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("unauthenticated");
  });
});

describe("what a refusal names", () => {
  it("an unknown query parameter is named as one, on the list and the export", async () => {
    for (const path of ["/api/v1/operations?colour=red", "/api/v1/audit/export?colour=red&size=9"]) {
      const r = await send("GET", path);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("invalid_query");
      expect(r.body.error.message).toMatch(/^the query has (an )?unknown parameters? "colour"/);
      expect(r.body.error.details[0].path).toBe("query");
    }
  });

  it("a cursor past any seq is refused as one this API never returned (it was a 500 on PostgreSQL)", async () => {
    for (const q of ["cursor=999999999999999", "newer_than=2147483648"]) {
      const r = await send("GET", `/api/v1/operations?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.error.message).toContain("is not a cursor this API returned");
    }
    expect((await send("GET", "/api/v1/operations?cursor=2147483647")).status).toBe(200);
  });

  it("an unknown field of a correction is named as one", async () => {
    const r = await send("POST", "/api/v1/operations/op-1/corrections", { body: JSON.stringify({ action: "reopen", reason: "x", colour: "red" }) });
    expect(r.status).toBe(422);
    expect(r.body.error.message).toContain('the request has an unknown field "colour"');
  });
});

describe("ids holding a NUL character", () => {
  it("are 404 on every route that takes an id, never a 5xx (PostgreSQL refuses NUL in text)", async () => {
    const admin = (await principal("admin", ["read", "review", "admin"])).token;
    for (const path of ["/api/v1/operations/op%00x", "/api/v1/operations/op%00x/claim", "/api/v1/operations/op%00x/comments", "/api/v1/webhooks/ep_%00", "/api/v1/webhooks/ep_%00/deliveries", "/api/v1/verifiers/v%00"]) {
      const res = await fetch(baseUrl + path, { headers: { authorization: `Bearer ${admin}` } });
      expect(res.status, path).toBe(404);
    }
  });
});
