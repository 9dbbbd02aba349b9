import { describe, expect, it } from "vitest";
import { backoffDelay, parseRetryAfter } from "./src/backoff";

describe("backoffDelay", () => {
  const top = () => 1; // the top of the jitter range
  const bottom = () => 0;

  it("doubles with each failure, between half and all of it", () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, { initialMs: 100, maxMs: 10_000 }, null, top))).toEqual([100, 200, 400, 800]);
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, { initialMs: 100, maxMs: 10_000 }, null, bottom))).toEqual([50, 100, 200, 400]);
  });

  it("never exceeds the cap, however many failures", () => {
    expect(backoffDelay(50, { initialMs: 100, maxMs: 3_000 }, null, top)).toBe(3_000);
    expect(backoffDelay(10_000, { initialMs: 100, maxMs: 3_000 }, null, bottom)).toBe(1_500);
  });

  it("is never sooner than Retry-After, and Retry-After is capped too", () => {
    expect(backoffDelay(1, { initialMs: 100, maxMs: 30_000 }, 5_000, top)).toBe(5_000);
    expect(backoffDelay(1, { initialMs: 100, maxMs: 30_000 }, 120_000, top)).toBe(30_000);
    // A Retry-After shorter than the backoff does not shorten it.
    expect(backoffDelay(6, { initialMs: 100, maxMs: 30_000 }, 1_000, top)).toBe(3_200);
  });
});

describe("parseRetryAfter", () => {
  it("reads delay-seconds and HTTP dates", () => {
    expect(parseRetryAfter("3")).toBe(3_000);
    expect(parseRetryAfter(" 0 ")).toBe(0);
    const now = Date.parse("2026-08-28T10:00:00Z");
    expect(parseRetryAfter("Fri, 28 Aug 2026 10:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Fri, 28 Aug 2026 09:00:00 GMT", now)).toBe(0);
  });

  it("is null when absent or not understood", () => {
    expect(parseRetryAfter(null)).toBeNull();
    expect(parseRetryAfter("-1")).toBeNull();
    expect(parseRetryAfter("1.5")).toBeNull();
    expect(parseRetryAfter("soon")).toBeNull();
  });
});
