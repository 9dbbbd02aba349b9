import { describe, expect, it } from "vitest";
import { htRecall } from "./ht-recall";

describe("htRecall (Horvitz–Thompson estimate of Metric 4)", () => {
  it("with every failure reviewed (probability 1) it is the plain recall", () => {
    const r = htRecall([
      { flagged: true, failed: true, probability: 1 },
      { flagged: true, failed: true, probability: 1 },
      { flagged: false, failed: true, probability: 1 },
      { flagged: true, failed: false, probability: 1 },
    ]);
    expect(r.value).toBeCloseTo(2 / 3);
    expect(r.failures).toBeCloseTo(3);
    expect(r.missed).toBeCloseTo(1);
    expect(r.missedStdError).toBe(0);
  });
  it("weights each sampled miss by 1 / its inclusion probability", () => {
    // 9 flagged failures (all reviewed), 2 misses found in a 10 % audit sample: about 20 missed.
    const ops = [...Array(9)].map(() => ({ flagged: true, failed: true, probability: 1 }));
    ops.push({ flagged: false, failed: true, probability: 0.1 }, { flagged: false, failed: true, probability: 0.1 });
    const r = htRecall(ops);
    expect(r.missed).toBeCloseTo(20);
    expect(r.failures).toBeCloseTo(29);
    expect(r.value).toBeCloseTo(9 / 29);
    // Poisson sampling: Var = Σ (1 − π) / π² over the sampled misses.
    expect(r.missedStdError).toBeCloseTo(Math.sqrt(2 * 0.9 / 0.01));
  });
  it("the unweighted recall of the same review queue is biased upwards", () => {
    const ops = [{ flagged: true, failed: true, probability: 1 }, { flagged: false, failed: true, probability: 0.25 }];
    expect(htRecall(ops).value).toBeCloseTo(1 / 5);
    expect(htRecall(ops.map((o) => ({ ...o, probability: 1 }))).value).toBeCloseTo(1 / 2);
  });
  it("no known failure: undefined, not zero", () => {
    expect(htRecall([]).value).toBeNull();
    expect(htRecall([{ flagged: true, failed: false, probability: 1 }]).value).toBeNull();
  });
  it("refuses an inclusion probability outside (0, 1]", () => {
    expect(() => htRecall([{ flagged: false, failed: true, probability: 0 }])).toThrow(/probability/);
    expect(() => htRecall([{ flagged: false, failed: true, probability: 1.5 }])).toThrow(/probability/);
    expect(() => htRecall([{ flagged: false, failed: true, probability: Number.NaN }])).toThrow(/probability/);
  });
});
