import { afterEach, describe, expect, it } from "vitest";
import { unique } from "@/lib/testing/integration";

/**
 * Durable jobs on the real database (SQLite and PostgreSQL): written only with the transaction
 * that causes them, claimed under a lease by one claimant at a time, finished once. Each test
 * uses its own job kind, which the running server has no handler for.
 */
const store = () => import("@/lib/store/work/jobs");
const db = () => import("@/lib/store/db/db");

async function rows(kind: string) {
  const { reader } = await db();
  const { asSql } = await import("@/lib/store/db/sql");
  const out = await asSql(await reader()).all<{ key: string; status: string; attempts: number | bigint; last_error: string | null }>(
    `SELECT key, status, attempts, last_error FROM job WHERE kind = ${(await import("@/lib/store/db/sql")).placeholder(1)} ORDER BY key`,
    [kind],
  );
  return out.map((r) => ({ ...r, attempts: Number(r.attempts) }));
}

let stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stops) await s();
  stops = [];
});

describe("jobs", () => {
  it("exist exactly when the transaction that wrote them commits; a key enqueued twice is one job", async () => {
    const { enqueueJobs } = await store();
    const { writeTransaction } = await db();
    const kind = unique("kind");
    await expect(
      writeTransaction(async (tx) => {
        await enqueueJobs(tx, [{ kind, key: `${kind}:rolled-back`, payload: {}, dueAt: Date.now() }]);
        throw new Error("the change failed");
      }),
    ).rejects.toThrow("the change failed");
    await writeTransaction((tx) => enqueueJobs(tx, [{ kind, key: `${kind}:a`, payload: { n: 1 }, dueAt: Date.now() }]));
    await writeTransaction((tx) => enqueueJobs(tx, [{ kind, key: `${kind}:a`, payload: { n: 2 }, dueAt: Date.now() }]));
    expect(await rows(kind)).toEqual([{ key: `${kind}:a`, status: "pending", attempts: 0, last_error: null }]);
  });

  it("are claimed by one claimant at a time, due ones only, in due order", async () => {
    const { enqueueJobs, claimJobs } = await store();
    const { writeTransaction } = await db();
    const kind = unique("kind");
    const now = Date.now();
    await writeTransaction((tx) =>
      enqueueJobs(tx, [
        { kind, key: `${kind}:2`, payload: 2, dueAt: now - 1000 },
        { kind, key: `${kind}:1`, payload: 1, dueAt: now - 2000 },
        { kind, key: `${kind}:later`, payload: 3, dueAt: now + 60_000 },
      ]),
    );
    const [a, b] = await Promise.all([claimJobs(kind, 10, 60_000), claimJobs(kind, 10, 60_000)]);
    const claimed = [...a, ...b];
    expect(claimed.map((j) => j.payload).sort()).toEqual([1, 2]);
    expect(new Set(claimed.map((j) => j.id)).size).toBe(2);
    expect(await claimJobs(kind, 10, 60_000)).toEqual([]);
    const ordered = unique("kind");
    await writeTransaction((tx) =>
      enqueueJobs(tx, [
        { kind: ordered, key: `${ordered}:b`, payload: "b", dueAt: now - 1000 },
        { kind: ordered, key: `${ordered}:a`, payload: "a", dueAt: now - 2000 },
      ]),
    );
    expect((await claimJobs(ordered, 1, 60_000)).map((j) => j.payload)).toEqual(["a"]);
    expect((await claimJobs(ordered, 1, 60_000)).map((j) => j.payload)).toEqual(["b"]);
  });

  it("are finished once: a claim whose lease ran out and was taken over cannot record its result", async () => {
    const { enqueueJobs, claimJobs, finishJob, LeaseLost } = await store();
    const { writeTransaction } = await db();
    const kind = unique("kind");
    await writeTransaction((tx) => enqueueJobs(tx, [{ kind, key: `${kind}:x`, payload: null, dueAt: Date.now() }]));
    const [first] = await claimJobs(kind, 1, 50);
    await new Promise((r) => setTimeout(r, 80));
    const [second] = await claimJobs(kind, 1, 60_000);
    expect(second.id).toBe(first.id);
    expect(second.attempts).toBe(2);
    const marker = unique("result");
    // The late claimant's result and its finish roll back together.
    await expect(
      writeTransaction(async (tx) => {
        await tx.rateLimiterFlexible.create({ data: { key: marker, points: 1 } });
        await finishJob(tx, first, { status: "done" });
      }),
    ).rejects.toBeInstanceOf(LeaseLost);
    const { reader } = await db();
    expect(await (await reader()).rateLimiterFlexible.count({ where: { key: marker } })).toBe(0);
    await writeTransaction((tx) => finishJob(tx, second, { status: "done" }));
    await expect(writeTransaction((tx) => finishJob(tx, second, { status: "done" }))).rejects.toBeInstanceOf(LeaseLost);
    expect(await rows(kind)).toMatchObject([{ status: "done", attempts: 2 }]);
  });

  it("retry gives a job back for later, with the error; only its holder may", async () => {
    const { enqueueJobs, claimJobs, retryJob } = await store();
    const { writeTransaction } = await db();
    const kind = unique("kind");
    await writeTransaction((tx) => enqueueJobs(tx, [{ kind, key: `${kind}:r`, payload: null, dueAt: Date.now() }]));
    const [job] = await claimJobs(kind, 1, 60_000);
    expect(await retryJob({ ...job, owner: "someone else" }, Date.now(), "not mine")).toBe(false);
    expect(await retryJob(job, Date.now() + 200, "503 from the service")).toBe(true);
    expect(await claimJobs(kind, 1, 60_000)).toEqual([]);
    await new Promise((r) => setTimeout(r, 250));
    const [again] = await claimJobs(kind, 1, 60_000);
    expect(again.attempts).toBe(2);
    expect(await rows(kind)).toMatchObject([{ status: "pending", last_error: "503 from the service" }]);
  });

  it("the worker runs each job once, retries a handler that throws, and wakes on new work", async () => {
    const { enqueueJobs } = await store();
    const { writeTransaction } = await db();
    const { registerJobHandler, startJobWorker, wakeJobs } = await import("./worker");
    const { finishJob } = await store();
    const kind = unique("kind");
    const seen: string[] = [];
    let failures = 0;
    registerJobHandler(
      kind,
      async (job) => {
        seen.push(job.key);
        if (job.key.endsWith(":flaky") && failures++ === 0) throw new Error("first try fails");
        await writeTransaction((tx) => finishJob(tx, job, { status: "done" }));
      },
      { concurrency: 3 },
    );
    const worker = startJobWorker({ pollMs: 5_000, log: () => {} });
    stops.push(worker.stop);
    const keys = Array.from({ length: 12 }, (_, i) => `${kind}:${i}`);
    await writeTransaction((tx) => enqueueJobs(tx, [...keys, `${kind}:flaky`].map((key) => ({ kind, key, payload: null, dueAt: Date.now() }))));
    wakeJobs();
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && (await rows(kind)).some((r) => r.status !== "done")) await new Promise((r) => setTimeout(r, 50));
    const final = await rows(kind);
    expect(final.every((r) => r.status === "done")).toBe(true);
    expect(seen.filter((k) => !k.endsWith(":flaky")).sort()).toEqual([...keys].sort());
    expect(final.find((r) => r.key.endsWith(":flaky"))).toMatchObject({ attempts: 2, last_error: "first try fails" });
  });
});
