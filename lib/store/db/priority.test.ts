import { afterEach, describe, expect, it } from "vitest";
import { ingestPacer } from "./pace";
import { ingestTurn, interactiveBegin, interactiveWaiting } from "./priority";

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};
/** A page at work: a step of `ms` every turn of the event loop until stopped. */
function pageAtWork(ms: number): () => void {
  let on = true;
  const step = () => {
    if (!on) return;
    busy(ms);
    setImmediate(step);
  };
  setImmediate(step);
  return () => (on = false);
}

const ends: (() => void)[] = [];
const begin = () => {
  const end = interactiveBegin();
  ends.push(end);
  return end;
};
afterEach(async () => {
  for (const end of ends.splice(0)) end();
  delete process.env.RECONCILE_INTERACTIVE_SLICE_MS;
  // Let whatever waits in the line go before the next test.
  for (let i = 0; i < 20; i++) await turn();
});

describe("interactive first: ingest's line", () => {
  it("with no interactive request in flight, an ingest step goes on at once", async () => {
    expect(interactiveWaiting()).toBe(false);
    let went = false;
    void ingestTurn().then(() => (went = true));
    await Promise.resolve();
    expect(went).toBe(true);
  });

  it("while one is in flight, steps go one a turn of the event loop, in the order they came", async () => {
    begin();
    const order: number[] = [];
    const all = [1, 2, 3].map((n) => ingestTurn().then(() => order.push(n)));
    await Promise.resolve();
    expect(order).toEqual([]);
    await turn();
    expect(order).toEqual([1]);
    await turn();
    expect(order).toEqual([1, 2]);
    await Promise.all(all);
    expect(order).toEqual([1, 2, 3]);
  });

  it("after a slice, the pages get as long again before the next step, while they have work", async () => {
    begin();
    const stop = pageAtWork(1);
    try {
      await ingestTurn(); // in the line
      const t0 = performance.now();
      await ingestTurn(20); // a slice of 20 ms just ran: ~20 ms are the pages'
      expect(performance.now() - t0).toBeGreaterThanOrEqual(15);
    } finally {
      stop();
    }
  });

  it("the pause ends early when the pages leave the thread idle (they wait on their clients)", async () => {
    begin();
    await ingestTurn();
    const t0 = performance.now();
    await ingestTurn(200); // owed: the longest pause, 50 ms
    expect(performance.now() - t0).toBeLessThan(40);
  });

  it("when the last interactive request ends, steps go on at once again", async () => {
    const end = begin();
    expect(interactiveWaiting()).toBe(true);
    end();
    end(); // ending twice is harmless
    expect(interactiveWaiting()).toBe(false);
    let went = false;
    void ingestTurn().then(() => (went = true));
    await Promise.resolve();
    expect(went).toBe(true);
  });

  it("RECONCILE_INTERACTIVE_SLICE_MS=0 turns it off", async () => {
    process.env.RECONCILE_INTERACTIVE_SLICE_MS = "0";
    begin();
    expect(interactiveWaiting()).toBe(false);
    let went = false;
    void ingestTurn(50).then(() => (went = true));
    await Promise.resolve();
    expect(went).toBe(true);
  });
});

describe("ingestPacer", () => {
  it("while a page is in flight, slices are short; inside a transaction they never stand in the line", async () => {
    begin();
    const stop = pageAtWork(1);
    try {
      // Others stand in the line, with long pauses owed before them (the pages have work: paid in full).
      const waiting = [ingestTurn(0), ingestTurn(40), ingestTurn(40)];
      const pace = ingestPacer({ holdsLock: true });
      busy(6); // past the 4 ms slice
      const t0 = performance.now();
      await pace();
      expect(performance.now() - t0).toBeLessThan(20); // behind the line it would be ≥ 80 ms
      await Promise.all(waiting);
    } finally {
      stop();
    }
  });

  it("outside a transaction, a slice past its length waits its turn behind the line", async () => {
    begin();
    const stop = pageAtWork(1);
    try {
      const order: string[] = [];
      const first = ingestTurn(0).then(() => order.push("first"));
      const pace = ingestPacer();
      busy(6);
      await pace().then(() => order.push("pacer"));
      await first;
      expect(order).toEqual(["first", "pacer"]);
    } finally {
      stop();
    }
  });

  it("with nothing interactive in flight, slices are the usual 25 ms", async () => {
    const pace = ingestPacer();
    busy(6);
    let went = false;
    void pace().then(() => (went = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(went).toBe(true); // returned without yielding: 6 ms is within its slice
  });
});
