import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ApiError } from "@/lib/api/errors";
import { disconnect } from "@/lib/store/db/db";
import { takeUserJobLease } from "@/lib/store/people/job-leases";
import { releasingWhenDone, startUserJob } from "./user-jobs";

/**
 * One heavy job at a time per user (TRUST.md "Backpressure"), held by a lease row in the
 * database, so it holds across instances (one-export-at-a-time.itest.ts has the HTTP side, with
 * a second server). Here the slot itself, on the suite's database.
 */
let previous: string | undefined;
beforeAll(() => {
  previous = process.env.DATABASE_URL;
  process.env.DATABASE_URL = inject("databaseUrl");
});
afterAll(async () => {
  await disconnect();
  process.env.DATABASE_URL = previous;
});

const user = () => `user-jobs-${Math.random().toString(36).slice(2)}`;

describe("one heavy job at a time per user", () => {
  it("a second job of the same user is 429 busy until the first is released; other users are not blocked", async () => {
    const [u1, u2] = [user(), user()];
    const release = await startUserJob(u1, "An export");
    await expect(startUserJob(u1, "A verification")).rejects.toBeInstanceOf(ApiError);
    await expect(startUserJob(u1, "A verification")).rejects.toMatchObject({ code: "busy", status: 429, retryAfter: 5, details: { running: "An export" } });
    const other = await startUserJob(u2, "An export");
    await release();
    await release(); // twice is harmless and frees nothing of anyone else
    await (await startUserJob(u1, "A verification"))();
    await expect(startUserJob(u2, "x")).rejects.toThrow(/An export you started is still running/);
    await other();
  });

  it("a stream gives the slot back when it ends, and when it is abandoned", async () => {
    const u3 = user();
    async function* chunks() {
      yield "a";
      yield "b";
    }
    const all: string[] = [];
    for await (const c of releasingWhenDone(chunks(), await startUserJob(u3, "An export"))) all.push(c);
    expect(all).toEqual(["a", "b"]);
    const abandoned = releasingWhenDone(chunks(), await startUserJob(u3, "An export"));
    await abandoned.next();
    await expect(startUserJob(u3, "x")).rejects.toBeInstanceOf(ApiError);
    await abandoned.return(undefined);
    await (await startUserJob(u3, "x"))();
  });

  it("a lease whose instance died (never ended, never renewed) runs out, and then the slot may be taken", async () => {
    const u4 = user();
    const t0 = Date.now();
    expect(await takeUserJobLease(u4, "An export", 60_000, t0)).toMatchObject({ held: true });
    // Still inside the dead instance's lease: refused, naming its job.
    expect(await takeUserJobLease(u4, "A verification", 60_000, t0 + 59_000)).toEqual({ held: false, running: "An export" });
    // Past it: taken over.
    expect(await takeUserJobLease(u4, "A verification", 60_000, t0 + 61_000)).toMatchObject({ held: true });
    expect(await takeUserJobLease(u4, "An export", 60_000, t0 + 62_000)).toEqual({ held: false, running: "A verification" });
  });
});
