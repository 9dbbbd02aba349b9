import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { unique } from "@/lib/testing/integration";

/**
 * Several processes write one database: two instances on one SQLite file, or the command line
 * beside a running server. A write transaction that reads before it writes must still commit
 * when another connection writes in between: on SQLite a deferred transaction cannot upgrade a
 * stale read snapshot (SQLITE_BUSY at once, no busy wait), which made a second instance fail to
 * start (the setup code read the users, then inserted).
 */
const url = inject("databaseUrl");

/** Another connection's write, now: true if it committed, false if the database made it wait. */
async function otherConnectionWrites(key: string): Promise<boolean> {
  if (url.startsWith("file:")) {
    const other = new Database(url.replace(/^file:/, ""), { timeout: 0 });
    try {
      other.prepare("INSERT INTO rate_limits (key, points) VALUES (?, 1)").run(key);
      return true;
    } catch (e) {
      if ((e as { code?: string }).code?.startsWith("SQLITE_BUSY")) return false;
      throw e;
    } finally {
      other.close();
    }
  }
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  try {
    await other.query("INSERT INTO rate_limits (key, points) VALUES ($1, 1)", [key]);
    return true;
  } finally {
    await other.end();
  }
}

describe("write transactions and other connections", () => {
  it("a transaction that reads, then writes, commits although another connection writes in between", async () => {
    const { writeTransaction } = await import("@/lib/store/db/db");
    const mine = unique("wl-mine");
    const theirs = unique("wl-theirs");
    let otherCommitted: boolean | null = null;
    await writeTransaction(async (tx) => {
      await tx.user.count();
      otherCommitted = await otherConnectionWrites(theirs);
      await tx.rateLimiterFlexible.create({ data: { key: mine, points: 1 } });
    });
    const { reader } = await import("@/lib/store/db/db");
    const rows = await (await reader()).rateLimiterFlexible.findMany({ where: { key: { in: [mine, theirs] } } });
    expect(rows.map((r) => r.key).sort()).toEqual(otherCommitted ? [mine, theirs].sort() : [mine]);
    // On SQLite the transaction holds the write lock from its first statement, so the other
    // connection is the one told to wait; on PostgreSQL both commit.
    expect(otherCommitted).toBe(!url.startsWith("file:"));
  });
});
