import { describe, expect, it } from "vitest";
import { classifyBatch, gateFromOperation } from "./src/response";

const error = (code: string) => JSON.stringify({ error: { code, message: `${code} happened` } });

describe("classifyBatch: only 429, 5xx and network errors are sent again", () => {
  it("429 and 5xx are retried, with the Retry-After", () => {
    expect(classifyBatch(429, "7", error("overloaded"), 3)).toEqual({ kind: "retry", status: 429, error: "overloaded: overloaded happened", retryAfterMs: 7_000 });
    expect(classifyBatch(503, null, "<html>bad gateway</html>", 3)).toMatchObject({ kind: "retry", status: 503, retryAfterMs: null });
  });

  it("any other 4xx refuses every record of the request for good", () => {
    for (const [status, code] of [[400, "malformed_json"], [401, "unauthenticated"], [403, "forbidden"], [422, "invalid_request"]] as const) {
      const v = classifyBatch(status, null, error(code), 2);
      expect(v).toEqual({ kind: "items", items: [1, 2].map(() => ({ kind: "rejected", status, code, message: `${code} happened` })) });
    }
  });

  it("with retryAuthFailures, a whole request refused 401 or 403 (the token) is tried again; an item's own 403 is still refused", () => {
    for (const [status, code] of [[401, "unauthenticated"], [403, "forbidden"]] as const) {
      expect(classifyBatch(status, "5", error(code), 2, Date.now(), { retryAuthFailures: true })).toEqual({ kind: "retry", status, error: `${code}: ${code} happened`, retryAfterMs: 5_000 });
    }
    expect(classifyBatch(422, null, error("invalid_request"), 1, Date.now(), { retryAuthFailures: true })).toMatchObject({ kind: "items" });
    const body = JSON.stringify({ results: [{ index: 0, status: 201 }, { index: 1, status: 403, error: { code: "not_operation_owner", message: "not yours" } }] });
    expect(classifyBatch(207, null, body, 2, Date.now(), { retryAuthFailures: true })).toEqual({
      kind: "items",
      items: [{ kind: "delivered" }, { kind: "rejected", status: 403, code: "not_operation_owner", message: "not yours" }],
    });
  });

  it("413 splits a batch; a single record that is too large is refused", () => {
    expect(classifyBatch(413, null, error("too_large"), 4)).toEqual({ kind: "split" });
    expect(classifyBatch(413, null, error("too_large"), 1)).toMatchObject({ kind: "items", items: [{ kind: "rejected", status: 413, code: "too_large" }] });
  });

  it("a 207 is read item by item", () => {
    const body = JSON.stringify({
      results: [
        { index: 0, status: 201, operation_id: "a" },
        { index: 1, status: 409, error: { code: "conflict", message: "a different receipt" } },
        { index: 2, status: 200, duplicate: true },
        { index: 3, status: 503, error: { code: "unavailable", message: "later" } },
      ],
    });
    expect(classifyBatch(207, null, body, 4)).toEqual({
      kind: "items",
      items: [{ kind: "delivered" }, { kind: "rejected", status: 409, code: "conflict", message: "a different receipt" }, { kind: "delivered" }, { kind: "retry" }],
    });
  });

  it("a 200 that is not the server's answer proves nothing was stored: retried", () => {
    expect(classifyBatch(200, null, "<html>captive portal</html>", 2)).toMatchObject({ kind: "retry", status: 200 });
    expect(classifyBatch(200, null, JSON.stringify({ results: [{ index: 0, status: 201 }] }), 2)).toMatchObject({ kind: "retry" });
  });
});

describe("gateFromOperation: an idempotency key alone never opens the gate", () => {
  it("uncertain with an enforced key: a reviewed replay is available, an automatic retry is not", () => {
    const gate = gateFromOperation({
      effective_outcome: "uncertain",
      idempotency: { enforced: true, key: "k-1" },
      retry: { automatic: false, safe_replay_available: true, decision: "blocked until canonical state is reconciled" },
    });
    expect(gate).toEqual({ allowed: false, reason: "blocked until canonical state is reconciled", safe_replay_available: true, key: "k-1", outcome: "uncertain" });
  });

  it("opens only when the server says automatic: true", () => {
    expect(gateFromOperation({ retry: { automatic: true, safe_replay_available: false, decision: "go" } }).allowed).toBe(true);
    expect(gateFromOperation({ retry: { automatic: "yes", decision: "go" } }).allowed).toBe(false);
    expect(gateFromOperation({}).allowed).toBe(false);
    expect(gateFromOperation(null)).toEqual({ allowed: false, reason: "the server gave no retry decision", safe_replay_available: false });
  });
});
