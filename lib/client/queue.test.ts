import { describe, expect, it } from "vitest";
import { BoundedQueue } from "./src/queue";

describe("BoundedQueue", () => {
  it("holds at most maxItems; a push past it waits for room and gets it in arrival order", async () => {
    const q = new BoundedQueue<string>(2, 1_000);
    expect(await q.push("a", 1, 0)).not.toBeNull();
    expect(await q.push("b", 1, 0)).not.toBeNull();
    expect(await q.push("c", 1, 0)).toBeNull(); // no waiting allowed: refused at once
    const order: string[] = [];
    const c = q.push("c", 1, 5_000).then((e) => order.push(e!.item));
    const d = q.push("d", 1, 5_000).then((e) => order.push(e!.item));
    expect(q.waiters).toBe(2);
    const [a] = q.take(1, 1_000);
    expect(a.item).toBe("a");
    q.remove(a);
    await c;
    expect(q.items()).toEqual(["b", "c"]);
    q.remove(q.take(1, 1_000)[0]);
    await d;
    expect(order).toEqual(["c", "d"]);
    expect(q.items()).toEqual(["c", "d"]);
    expect(q.peakItems).toBe(2);
  });

  it("bounds bytes as well as items", async () => {
    const q = new BoundedQueue<string>(100, 10);
    expect(await q.push("six", 6, 0)).not.toBeNull();
    expect(await q.push("five", 5, 0)).toBeNull();
    expect(await q.push("four", 4, 0)).not.toBeNull();
    expect(q.bytes).toBe(10);
    expect(q.peakBytes).toBe(10);
  });

  it("refuses at once an item that could never fit", async () => {
    const q = new BoundedQueue<string>(10, 10);
    const started = Date.now();
    expect(await q.push("huge", 11, 5_000)).toBeNull();
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("gives up on a wait after its time, and the waiters behind it then get their turn", async () => {
    const q = new BoundedQueue<string>(10, 10);
    await q.push("eight", 8, 0);
    const big = q.push("big", 9, 50); // waits at the head, never fits while "eight" stays
    const small = q.push("small", 2, 5_000); // fits now, but does not jump the queue
    expect(q.items()).toEqual(["eight"]);
    expect(await big).toBeNull();
    expect((await small)!.item).toBe("small");
    expect(q.items()).toEqual(["eight", "small"]);
  });

  it("a newcomer does not jump ahead of waiters even when it would fit", async () => {
    const q = new BoundedQueue<string>(1, 100);
    const first = await q.push("first", 1, 0);
    const waiting = q.push("waiting", 1, 5_000);
    expect(await q.push("newcomer", 1, 0)).toBeNull();
    q.remove(first!);
    expect((await waiting)!.item).toBe("waiting");
  });

  it("takes the oldest entries not in flight, within the batch bounds", async () => {
    const q = new BoundedQueue<number>(100, 1_000);
    for (let i = 0; i < 5; i++) await q.push(i, 10, 0);
    expect(q.take(2, 1_000).map((e) => e.item)).toEqual([0, 1]);
    expect(q.take(10, 25).map((e) => e.item)).toEqual([2, 3]); // 30 bytes would pass 25
    expect(q.take(10, 5).map((e) => e.item)).toEqual([4]); // at least one, even past the bytes bound
    expect(q.take(10, 1_000)).toEqual([]);
    expect(q.length).toBe(5); // in flight still counts against the bound
  });

  it("drain() empties it and releases every waiter", async () => {
    const q = new BoundedQueue<string>(1, 100);
    await q.push("a", 1, 0);
    const waiting = q.push("b", 1, 60_000);
    expect(q.drain()).toEqual(["a"]);
    expect(await waiting).toBeNull();
    expect(q.length).toBe(0);
    expect(q.bytes).toBe(0);
  });
});
