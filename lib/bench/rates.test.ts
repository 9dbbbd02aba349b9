import { describe, expect, it } from "vitest";
import { secondHalfRate } from "./rates";

describe("secondHalfRate", () => {
  it("counts the requests answered after the first half's last answer, over the time since it", () => {
    // Four answers at 0, 3,000, 3,500 and 4,000 ms: the second half is two requests in 1 s
    // (the whole run, four in 4 s, would be 100).
    expect(secondHalfRate([4000, 0, 3500, 3000], 100)).toBe(200);
  });

  it("ignores how slow the first half was", () => {
    // The first answer came 4 s or 0.1 s before the second: the same second half, two requests in 2 s.
    expect(secondHalfRate([0, 4000, 5000, 6000], 100)).toBe(100);
    expect(secondHalfRate([3900, 4000, 5000, 6000], 100)).toBe(100);
  });

  it("takes an odd count's middle answer into the second half", () => {
    // Five answers: the first half is two (ends at 1,000 ms), the second three (to 4,000 ms).
    expect(secondHalfRate([0, 1000, 2000, 3000, 4000], 10)).toBe(10);
  });

  it("is NaN with too few answers or none apart", () => {
    expect(secondHalfRate([5], 100)).toBeNaN();
    expect(secondHalfRate([], 100)).toBeNaN();
    expect(secondHalfRate([7, 7], 100)).toBeNaN();
  });
});
