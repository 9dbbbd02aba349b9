import { describe, expect, it } from "vitest";
import { DEFAULT_REVIEW_AGE_HOURS, olderThan, relativeAge, reviewAgeHours } from "./time";

const now = Date.parse("2026-12-01T12:00:00.000Z");
const before = (ms: number) => new Date(now - ms).toISOString();

describe("relativeAge", () => {
  it.each([
    [0, "just now"],
    [4_999, "just now"],
    [5_000, "5 s ago"],
    [59_999, "59 s ago"],
    [60_000, "1 min ago"],
    [3_599_999, "59 min ago"],
    [3_600_000, "1 h ago"],
    [3 * 3_600_000 + 59 * 60_000, "3 h ago"],
    [86_400_000, "1 d ago"],
    [59 * 86_400_000, "59 d ago"],
    [60 * 86_400_000, "2 mo ago"],
    [800 * 86_400_000, "2 y ago"],
  ])("%i ms before is %s", (ms, text) => {
    expect(relativeAge(before(ms), now)).toBe(text);
  });
  it("says 'in' for a time ahead, and nothing for a non-time", () => {
    expect(relativeAge(before(-5 * 60_000), now)).toBe("in 5 min");
    expect(relativeAge("not a time", now)).toBe("");
  });
});

describe("review age threshold", () => {
  it("takes a positive number of hours; unset, the default", () => {
    expect(reviewAgeHours("4")).toBe(4);
    expect(reviewAgeHours("0.5")).toBe(0.5);
    for (const unset of [undefined, "", " "]) expect(reviewAgeHours(unset)).toBe(DEFAULT_REVIEW_AGE_HOURS);
    // A value that means nothing is refused (the server does not start: lib/domain/settings.ts), not replaced.
    for (const bad of ["0", "-3", "soon"]) expect(() => reviewAgeHours(bad)).toThrow(/RECONCILE_REVIEW_AGE_HOURS must be a number of hours > 0/);
  });
  it("flags only what is strictly older", () => {
    expect(olderThan(before(24 * 3_600_000), 24, now)).toBe(false);
    expect(olderThan(before(24 * 3_600_000 + 1), 24, now)).toBe(true);
    expect(olderThan("garbage", 24, now)).toBe(false);
  });
});
