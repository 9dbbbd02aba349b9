import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { passHatK, passHatKCurve, passHatKOverTasks } from "./pass-k";

/** All k-subsets of 0..n-1. */
function* subsets(n: number, k: number, from = 0): Generator<number[]> {
  if (k === 0) {
    yield [];
    return;
  }
  for (let i = from; i <= n - k; i++) for (const rest of subsets(n, k - 1, i + 1)) yield [i, ...rest];
}

describe("pass^k (τ-bench): C(c, k) / C(n, k)", () => {
  it("exact values", () => {
    expect(passHatK(8, 4, 1)).toBe(0.5);
    expect(passHatK(8, 4, 2)).toBeCloseTo(6 / 28, 15);
    expect(passHatK(8, 6, 3)).toBeCloseTo(20 / 56, 15);
    expect(passHatK(8, 7, 7)).toBeCloseTo(1 / 8, 15);
    expect(passHatK(5, 3, 2)).toBeCloseTo(3 / 10, 15);
    expect(passHatK(1, 1, 1)).toBe(1);
  });

  it("edges: no passing trial gives 0, all passing gives 1, k = n is 1 only when every trial passed", () => {
    for (let k = 1; k <= 8; k++) {
      expect(passHatK(8, 0, k)).toBe(0);
      expect(passHatK(8, 8, k)).toBe(1);
    }
    expect(passHatK(8, 7, 8)).toBe(0);
    expect(passHatK(8, 8, 8)).toBe(1);
    expect(passHatK(8, 3, 4)).toBe(0); // fewer passes than k
  });

  it("refuses k > n, k < 1, c outside 0…n and fractions", () => {
    expect(() => passHatK(8, 8, 9)).toThrow(/k = 9 exceeds n = 8/);
    expect(() => passHatK(8, 4, 0)).toThrow(RangeError);
    expect(() => passHatK(8, 9, 1)).toThrow(RangeError);
    expect(() => passHatK(8, -1, 1)).toThrow(RangeError);
    expect(() => passHatK(0, 0, 1)).toThrow(RangeError);
    expect(() => passHatK(8, 2.5, 1)).toThrow(RangeError);
    expect(() => passHatK(8, 2, 1.5)).toThrow(RangeError);
  });

  it("is unbiased: it equals the share of k-subsets of the n trials in which every trial passed", () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 9 }), fc.nat(), (trials, kSeed) => {
        const n = trials.length;
        const k = 1 + (kSeed % n);
        let all = 0;
        let count = 0;
        for (const s of subsets(n, k)) {
          count++;
          if (s.every((i) => trials[i])) all++;
        }
        expect(passHatK(n, trials.filter(Boolean).length, k)).toBeCloseTo(all / count, 12);
      }),
    );
  });

  it("averages over tasks, each with its own count of passing trials; none is no estimate", () => {
    expect(passHatKOverTasks([8, 0, 4], 8, 1)).toBeCloseTo((1 + 0 + 0.5) / 3, 15);
    expect(passHatKOverTasks([8, 0, 4], 8, 2)).toBeCloseTo((1 + 0 + 6 / 28) / 3, 15);
    expect(passHatKOverTasks([], 8, 1)).toBeNull();
    expect(() => passHatKOverTasks([8], 8, 9)).toThrow(RangeError);
  });

  it("the curve k = 1…n starts at the pass rate, never rises and ends at the share of tasks that always passed", () => {
    const counts = [8, 7, 5, 8, 0, 2];
    const curve = passHatKCurve(counts, 8);
    expect(curve).toHaveLength(8);
    expect(curve[0]).toBeCloseTo(30 / 48, 15);
    for (let i = 1; i < curve.length; i++) expect(curve[i]).toBeLessThanOrEqual(curve[i - 1]!);
    expect(curve[7]).toBeCloseTo(2 / 6, 15);
    expect(passHatKCurve([], 8)).toEqual(Array(8).fill(null));
  });
});
