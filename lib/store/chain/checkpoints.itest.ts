import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { prepareDatabase } from "@/lib/reliability/harness";
import { ownSqliteServers } from "@/lib/testing/own-server";

/**
 * Automatic checkpoints every RECONCILE_CHECKPOINT_EVERY records or time: servers of their
 * own (SQLite), started with a small setting, watched from the database as records arrive.
 */
const servers = ownSqliteServers("checkpoints");

async function server(name: string, every: string) {
  const url = servers.url(name);
  const file = url.slice("file:".length);
  const { tokens } = await prepareDatabase(url, name);
  const app = await servers.start(url, { RECONCILE_CHECKPOINT_EVERY: every, CHECKPOINT_KEY_FILE: path.join(servers.tmp, "key.pem") });
  const base = app.base;
  let n = 0;
  return {
    /** `count` single-stage records (one chain record each), in one batch. */
    async send(count: number) {
      const records = Array.from({ length: count }, () => ({ operation_id: `op-${name}-${++n}`, receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } }));
      const res = await fetch(`${base}/api/v1/receipts`, { method: "POST", headers: { authorization: `Bearer ${tokens.ingest}`, "content-type": "application/json" }, body: JSON.stringify({ records }) });
      const body = (await res.json()) as { results?: { status: number }[] };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.results?.every((r) => r.status === 201), JSON.stringify(body)).toBe(true);
    },
    checkpoints(): number[] {
      const db = new Database(file, { readonly: true });
      try {
        return (db.prepare("SELECT size FROM checkpoints ORDER BY size").all() as { size: number }[]).map((r) => r.size);
      } finally {
        db.close();
      }
    },
    head(): number {
      const db = new Database(file, { readonly: true });
      try {
        return (db.prepare("SELECT max(seq) AS s FROM chain_records").get() as { s: number }).s;
      } finally {
        db.close();
      }
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(read: () => T, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  let v = read();
  while (!ok(v) && Date.now() < deadline) {
    await sleep(100);
    v = read();
  }
  return v;
}

describe("RECONCILE_CHECKPOINT_EVERY", () => {
  it("a number: a checkpoint is signed once that many records have arrived since the last one", async () => {
    const s = await server("every-records", "25");
    await s.send(5);
    // The first write signs one at once (none existed).
    expect(await until(() => s.checkpoints(), (c) => c.length === 1)).toHaveLength(1);
    const first = s.checkpoints()[0];
    // Four rounds of 15: 20, 35 (30 behind: signed), 50, 65 (30 behind: signed).
    for (let round = 0; round < 4; round++) {
      await sleep(2_100); // maybeCheckpoint looks at most every 2 s
      await s.send(15);
    }
    const sizes = await until(() => s.checkpoints(), (c) => s.head() - c.at(-1)! < 25);
    // 60 records after the first: at least two more, each at least 25 records after the one before.
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    expect(sizes[0]).toBe(first);
    for (let i = 1; i < sizes.length; i++) expect(sizes[i] - sizes[i - 1]).toBeGreaterThanOrEqual(25);
    expect(s.head() - sizes.at(-1)!).toBeLessThan(25);
  });

  it("a time: while records keep arriving one is signed at least that often, and none when nothing arrived", async () => {
    const s = await server("every-time", "1000000,3s");
    await s.send(1);
    expect(await until(() => s.checkpoints(), (c) => c.length === 1)).toHaveLength(1);
    await s.send(1);
    // Not by the number (1,000,000): by the 3 s, through the next write or the timer.
    expect(await until(() => s.checkpoints(), (c) => c.length === 2, 8_000)).toHaveLength(2);
    expect(s.checkpoints()[1]).toBe(s.head());
    await sleep(4_000);
    expect(s.checkpoints()).toHaveLength(2);
  });
});
