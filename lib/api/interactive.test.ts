import { describe, expect, it } from "vitest";
import { isInteractive } from "./interactive";

describe("isInteractive: which requests ingest yields to", () => {
  it("pages, reads of the API, assets and reviewers' writes are interactive", () => {
    expect(isInteractive("GET", "/p/default/operations")).toBe(true);
    expect(isInteractive("GET", "/api/v1/operations?limit=50")).toBe(true);
    expect(isInteractive("GET", "/_next/static/chunks/app.js")).toBe(true);
    expect(isInteractive("POST", "/api/v1/operations/op-1/corrections")).toBe(true);
    expect(isInteractive("GET", "/api/v1/receipts")).toBe(true); // not a POST: not ingest
    expect(isInteractive(undefined, undefined)).toBe(true);
  });
  it("ingest is not: receipts and OTLP spans, with or without a query", () => {
    expect(isInteractive("POST", "/api/v1/receipts")).toBe(false);
    expect(isInteractive("POST", "/api/v1/receipts?x=1")).toBe(false);
    expect(isInteractive("POST", "/api/v1/otlp/v1/traces")).toBe(false);
  });
  it("nor are long polls, which sit idle for seconds; a wait of 0 is an ordinary read", () => {
    expect(isInteractive("GET", "/api/v1/operations/op-1?wait=30")).toBe(false);
    expect(isInteractive("GET", "/api/v1/operations/op-1/approval?wait=0.5")).toBe(false);
    expect(isInteractive("GET", "/api/v1/operations/op-1?wait=0")).toBe(true);
    expect(isInteractive("GET", "/api/v1/operations/op-1?wait=soon")).toBe(true); // answered 400 at once
  });
});
