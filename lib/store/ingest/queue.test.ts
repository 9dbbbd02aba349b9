import { systemSender } from "@/lib/domain/trust";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { IngestResult, ValidRecord } from "./records";

/**
 * The group-commit queue over a stand-in store: the store below records every transaction it
 * is asked to run and fails a whole transaction when any record in it is marked "poison", as a
 * database error would. The queue's own logic (grouping, renumbering, retrying alone) is real.
 */
const store = vi.hoisted(() => ({ transactions: [] as string[][], checkpoints: 0 }));

vi.mock("./records", () => ({
  ingestRecords: async (records: ValidRecord[]): Promise<IngestResult[]> => {
    store.transactions.push(records.map((r) => r.operationId));
    if (records.some((r) => r.operationId.startsWith("poison"))) throw new Error("the database refused the transaction");
    return records.map((r) => ({ index: r.index, created: true, body: { operation_id: r.operationId } as never }));
  },
}));
vi.mock("../chain/checkpoints", () => ({ maybeCheckpoint: async () => void store.checkpoints++ }));

const { submitIngest } = await import("./queue");
const { StoreError } = await import("../errors");
const { errorAnswer } = await import("@/lib/api/errors");

/** A request's records, indexed as the request numbered them (0..n-1). */
const request = (prefix: string, n: number): ValidRecord[] =>
  Array.from({ length: n }, (_, i) => ({ index: i, operationId: `${prefix}-${i}`, raw: {}, sender: systemSender("agent") }));

const ids = (results: IngestResult[]) => results.map((r) => [r.index, "body" in r ? (r.body as { operation_id: string }).operation_id : null]);

beforeEach(() => {
  store.transactions = [];
  store.checkpoints = 0;
});

describe("group commit", () => {
  it("requests that arrive together commit in one transaction, and each gets back its own results under its own indexes", async () => {
    const [a, b, c] = await Promise.all([submitIngest(request("a", 2)), submitIngest(request("b", 3)), submitIngest(request("c", 1))]);
    expect(store.transactions).toEqual([["a-0", "a-1", "b-0", "b-1", "b-2", "c-0"]]);
    expect(ids(a)).toEqual([[0, "a-0"], [1, "a-1"]]);
    expect(ids(b)).toEqual([[0, "b-0"], [1, "b-1"], [2, "b-2"]]);
    expect(ids(c)).toEqual([[0, "c-0"]]);
  });

  it("when the group's transaction fails, each request is retried alone: only the bad one fails", async () => {
    const settled = await Promise.allSettled([submitIngest(request("a", 2)), submitIngest(request("poison", 1)), submitIngest(request("c", 2))]);
    expect(store.transactions).toEqual([
      ["a-0", "a-1", "poison-0", "c-0", "c-1"],
      ["a-0", "a-1"],
      ["poison-0"],
      ["c-0", "c-1"],
    ]);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(ids((settled[0] as PromiseFulfilledResult<IngestResult[]>).value)).toEqual([[0, "a-0"], [1, "a-1"]]);
    expect(ids((settled[2] as PromiseFulfilledResult<IngestResult[]>).value)).toEqual([[0, "c-0"], [1, "c-1"]]);
    expect((settled[1] as PromiseRejectedResult).reason).toEqual(new Error("the database refused the transaction"));
  });

  it("a request alone whose transaction fails is rejected once, not retried", async () => {
    await expect(submitIngest(request("poison", 3))).rejects.toThrow("refused");
    expect(store.transactions).toEqual([["poison-0", "poison-1", "poison-2"]]);
  });

  it("groups stop at 2,000 records without splitting a request, in arrival order", async () => {
    const sizes = [1500, 400, 200, 2500, 10];
    const results = await Promise.all(sizes.map((n, i) => submitIngest(request(`r${i}`, n))));
    expect(store.transactions.map((t) => t.length)).toEqual([1900, 200, 2500, 10]);
    expect(store.transactions.flat()).toEqual(sizes.flatMap((n, i) => request(`r${i}`, n).map((r) => r.operationId)));
    results.forEach((r, i) => expect(r.map((x) => x.index)).toEqual([...Array(sizes[i]).keys()]));
  });

  it("requests that arrive while a transaction runs join the next one; an empty request never reaches the store", async () => {
    const first = submitIngest(request("a", 1));
    await new Promise((r) => setImmediate(r)); // the first transaction has started
    const later = [submitIngest(request("b", 1)), submitIngest(request("c", 1)), submitIngest([])];
    await Promise.all([first, ...later]);
    expect(store.transactions).toEqual([["a-0"], ["b-0", "c-0"]]);
    expect(await later[2]).toEqual([]);
    expect(store.checkpoints).toBe(2);
  });
});

describe("backpressure", () => {
  it("past RECONCILE_INGEST_QUEUE_MAX records waiting, a request is refused whole with 429 overloaded and Retry-After; what was taken is still written", async () => {
    process.env.RECONCILE_INGEST_QUEUE_MAX = "10";
    try {
      const first = submitIngest(request("running", 8)); // taken at once: the queue was empty
      await new Promise((r) => setImmediate(r)); // its transaction has started; nothing waits
      const waiting = [submitIngest(request("w1", 6)), submitIngest(request("w2", 4))]; // 10 waiting: at the limit
      const refused = await submitIngest(request("over", 1)).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(StoreError);
      expect(refused).toMatchObject({ kind: "overloaded", retryAfterSeconds: 1, details: { waiting: 10, limit: 10 } });
      const answer = errorAnswer(refused);
      expect(answer).toMatchObject({ status: 429, body: { error: { code: "overloaded", details: { waiting: 10, limit: 10 } } } });
      expect(answer.headers["retry-after"]).toBe("1");
      const done = await Promise.all([first, ...waiting]);
      expect(done.map((r) => r.length)).toEqual([8, 6, 4]);
      expect(store.transactions.flat()).not.toContain("over-0");
      // Drained: the queue takes requests again, even one larger than the limit.
      expect(await submitIngest(request("big", 25))).toHaveLength(25);
    } finally {
      delete process.env.RECONCILE_INGEST_QUEUE_MAX;
    }
  });

  it("20,000 records may wait by default", async () => {
    const first = submitIngest(request("running", 1));
    await new Promise((r) => setImmediate(r));
    const many = Array.from({ length: 40 }, (_, i) => submitIngest(request(`m${i}`, 500)));
    await expect(submitIngest(request("over", 1))).rejects.toMatchObject({ kind: "overloaded" });
    await Promise.all([first, ...many]);
  });
});
