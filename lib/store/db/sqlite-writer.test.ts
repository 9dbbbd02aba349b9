/**
 * SQLite's ingest connection, in its thread (sqlite-writer.ts) and inline (sqlite-direct.ts), on
 * a real database file: the two mean the same. A write sent without waiting is seen by the reads
 * after it; a failure anywhere fails the whole transaction, which leaves nothing behind; values
 * come back as they went in; the connection goes on after a failure.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { DirectSqlite } from "./sqlite-direct";
import { SqliteWriterThread } from "./sqlite-writer";

const dir = mkdtempSync(path.join(os.tmpdir(), "sqlite-writer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function database(name: string): string {
  const file = path.join(dir, `${name}.db`);
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (id TEXT PRIMARY KEY, v TEXT, n INTEGER, r REAL, b BLOB)");
  db.exec("CREATE TABLE u (id TEXT PRIMARY KEY, t_id TEXT NOT NULL)");
  db.close();
  return file;
}

const kinds = [
  { kind: "in its thread", open: (file: string) => new SqliteWriterThread(file, 20_000) },
  { kind: "inline", open: (file: string) => new DirectSqlite(file) },
];

describe.each(kinds)("the SQLite ingest connection, $kind", ({ kind, open }) => {
  const file = database(kind.replace(/\W/g, "-"));
  const conn = open(file);
  afterAll(() => conn.close());
  const stored = (sql: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare(sql).all();
    } finally {
      db.close();
    }
  };

  it("writes sent without waiting are seen by the reads after them, and committed together", async () => {
    const seen = await conn.transaction(async (sql) => {
      await sql.insert("t", ["id", "v", "n"], [["a", "one", 1], ["b", "two", 2]]);
      await sql.write("u", "INSERT INTO u (id, t_id) VALUES (?, ?)", ["u1", "a"]);
      return sql.all<{ c: number }>("SELECT count(*) AS c FROM t JOIN u ON u.t_id = t.id");
    });
    expect(seen).toEqual([{ c: 1 }]);
    expect(stored("SELECT id FROM t ORDER BY id")).toEqual([{ id: "a" }, { id: "b" }]);
  });

  it("a write's failure fails the whole transaction wherever it surfaces, and nothing of it is stored", async () => {
    const attempt = conn.transaction(async (sql) => {
      await sql.insert("t", ["id", "v"], [["c", "three"]]);
      await sql.write("t", "INSERT INTO t (id, v) VALUES (?, ?)", ["a", "again"]); // a's id is taken
      await sql.insert("t", ["id", "v"], [["d", "four"]]);
      return sql.all("SELECT 1");
    });
    await expect(attempt).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_CONSTRAINT/) });
    expect(stored("SELECT id FROM t WHERE id IN ('c', 'd')")).toEqual([]);
    // A failing COMMIT-time surface too: the last statement fails, nothing read after it.
    await expect(conn.transaction(async (sql) => sql.insert("t", ["id"], [["e"], ["e"]]))).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_CONSTRAINT/) });
    expect(stored("SELECT id FROM t WHERE id = 'e'")).toEqual([]);
    // And the connection goes on.
    await conn.transaction(async (sql) => sql.insert("t", ["id"], [["f"]]));
    expect(stored("SELECT id FROM t WHERE id = 'f'")).toEqual([{ id: "f" }]);
  });

  it("a failure of the caller's own rolls back what was sent", async () => {
    await expect(
      conn.transaction(async (sql) => {
        await sql.insert("t", ["id"], [["g"]]);
        throw new Error("the caller changed its mind");
      }),
    ).rejects.toThrow("the caller changed its mind");
    expect(stored("SELECT id FROM t WHERE id = 'g'")).toEqual([]);
  });

  it("values come back as they went in: text, integers, reals, null, booleans as 0/1, blobs; thousands of rows in one insert", async () => {
    const rows = Array.from({ length: 2_345 }, (_, i) => [`bulk-${i}`, `é ${i} 😀`, i, i / 4, null, Buffer.from([i % 256, 0, 255])]);
    const back = await conn.transaction(async (sql) => {
      await sql.insert("t", ["id", "v", "n", "r", "b"], [["vals", "x", true, 1.5, Buffer.from("blob")], ...rows.map((r) => [r[0], r[1], r[2], r[3], r[5]])]);
      return sql.all<{ id: string; v: string; n: number; r: number; b: Buffer }>("SELECT id, v, n, r, b FROM t WHERE id IN (?, ?) ORDER BY id", ["bulk-300", "vals"]);
    });
    expect(back).toEqual([
      { id: "bulk-300", v: "é 300 😀", n: 300, r: 75, b: Buffer.from([300 % 256, 0, 255]) },
      { id: "vals", v: "x", n: 1, r: 1.5, b: Buffer.from("blob") },
    ]);
    expect(stored("SELECT count(*) AS c FROM t WHERE id LIKE 'bulk-%'")).toEqual([{ c: 2_345 }]);
  });
});

describe("the writer thread's end", () => {
  it("once its thread has ended it says so, and a transaction is refused with why instead of waiting for ever", async () => {
    const conn = new SqliteWriterThread(database("ended"), 20_000);
    await conn.transaction(async (sql) => sql.insert("t", ["id"], [["x"]]));
    expect(conn.alive).toBe(true);
    await conn.close();
    expect(conn.alive).toBe(false);
    await expect(conn.transaction(async (sql) => sql.all("SELECT 1"))).rejects.toThrow(/SQLite writer thread ended/);
  });
});
