import { describe, expect, it } from "vitest";
import { routeMatcher, templatesOf } from "./routes";

const match = routeMatcher(
  templatesOf({
    "/(dashboard)/page": "/",
    "/(dashboard)/metrics/page": "/metrics",
    "/(dashboard)/operations/[operationId]/page": "/operations/[operationId]",
    "/api/v1/[...path]/route": "/api/v1/[...path]",
    "/api/v1/receipts/route": "/api/v1/receipts",
    "/api/v1/operations/[operationId]/route": "/api/v1/operations/[operationId]",
    "/api/v1/operations/[operationId]/claim/route": "/api/v1/operations/[operationId]/claim",
    "/_not-found/page": "/_not-found",
  }),
);

describe("the route label of http_request_seconds", () => {
  it("is the template a path matches, the most specific one", () => {
    expect(match("/")).toBe("/");
    expect(match("/metrics")).toBe("/metrics");
    expect(match("/api/v1/receipts")).toBe("/api/v1/receipts");
    expect(match("/api/v1/receipts/")).toBe("/api/v1/receipts");
    expect(match("/api/v1/operations/op-1")).toBe("/api/v1/operations/[operationId]");
    expect(match("/api/v1/operations/op-1/claim")).toBe("/api/v1/operations/[operationId]/claim");
    expect(match("/operations/x%20y")).toBe("/operations/[operationId]");
  });

  it("bounds the series whatever the path: unknown API paths share the catch-all, others are `other`", () => {
    expect(match("/api/v1/no/such/thing")).toBe("/api/v1/[...path]");
    expect(match("/api/v1/operations/a/b/c/d")).toBe("/api/v1/[...path]");
    expect(match("/wp-admin.php")).toBe("other");
    expect(match("/_not-found")).toBe("other");
    expect(match("/_next/static/chunks/x.js")).toBe("static");
  });

  it("reads only string values from a manifest", () => {
    expect(templatesOf(null)).toEqual([]);
    expect(templatesOf({ a: "/x", b: 3 })).toEqual(["/x"]);
  });
});
