import { describe, expect, it } from "vitest";
import { Backoff, restartDelay } from "./backoff";

describe("the restart backoff", () => {
  it("waits 1 s after the first failure, doubling to at most 30 s", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 20].map(restartDelay)).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
  });

  it("keeps doubling while the server fails before it has been up a minute", () => {
    const b = new Backoff();
    let t = 0;
    const delays = [];
    for (let i = 0; i < 7; i++) {
      b.up(t);
      t += 5_000; // up 5 s, then it exits again
      delays.push(b.down(t));
      t += delays.at(-1)!;
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  });

  it("counts failed starts (never up) as failures too", () => {
    const b = new Backoff();
    expect([b.down(0), b.down(1000), b.down(3000)]).toEqual([1000, 2000, 4000]);
  });

  it("starts again from 1 s after a minute up", () => {
    const b = new Backoff();
    b.down(0);
    b.down(1000);
    b.down(3000);
    b.up(7000);
    expect(b.down(7000 + 59_999)).toBe(8000);
    b.up(100_000);
    expect(b.down(160_000)).toBe(1000);
    expect(b.failures).toBe(1);
  });
});
