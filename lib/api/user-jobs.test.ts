import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/api/errors";
import { releasingWhenDone, startUserJob } from "./user-jobs";

describe("one heavy job at a time per user", () => {
  it("a second job of the same user is 429 busy until the first is released; other users are not blocked", () => {
    const release = startUserJob("u1", "An export");
    expect(() => startUserJob("u1", "A verification")).toThrow(ApiError);
    try {
      startUserJob("u1", "A verification");
    } catch (e) {
      expect(e).toMatchObject({ code: "busy", status: 429, retryAfter: 5, details: { running: "An export" } });
    }
    const other = startUserJob("u2", "An export");
    release();
    release(); // twice is harmless and frees nothing of anyone else
    startUserJob("u1", "A verification")();
    expect(() => startUserJob("u2", "x")).toThrow(/An export you started is still running/);
    other();
  });

  it("a stream gives the slot back when it ends, and when it is abandoned", async () => {
    async function* chunks() {
      yield "a";
      yield "b";
    }
    const r1 = startUserJob("u3", "An export");
    const all: string[] = [];
    for await (const c of releasingWhenDone(chunks(), r1)) all.push(c);
    expect(all).toEqual(["a", "b"]);
    const r2 = startUserJob("u3", "An export");
    const abandoned = releasingWhenDone(chunks(), r2);
    await abandoned.next();
    expect(() => startUserJob("u3", "x")).toThrow(ApiError);
    await abandoned.return(undefined);
    startUserJob("u3", "x")();
  });
});
