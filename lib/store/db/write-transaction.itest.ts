/**
 * The hot path's write transaction (sqlWriteTransaction) on the suite's kind of database. On
 * PostgreSQL its connection (pg-direct.ts) sends writes later and together, and the last of them
 * with COMMIT as text: these tests hold it to meaning exactly what statements sent one by one
 * mean. Writes are seen by the reads after them, a write's failure fails the whole transaction
 * wherever it surfaces, and any value comes back as it went in.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { unique } from "@/lib/testing/integration";

const store = () => import("@/lib/store/db/db");
const provider = async () => (await import("@/lib/store/db/database")).provider();

const A = "itest_write_a";
const B = "itest_write_b";
const C = "itest_write_c";

beforeAll(async () => {
  const reader = await (await store()).reader();
  for (const t of [A, B, C]) await reader.$executeRawUnsafe(`CREATE TABLE IF NOT EXISTS ${t} (id TEXT PRIMARY KEY, v TEXT, n INTEGER)`);
});

async function rows(table: string, prefix: string): Promise<{ id: string; v: string | null; n: number | null }[]> {
  const reader = await (await store()).reader();
  const out = await reader.$queryRawUnsafe<{ id: string; v: string | null; n: number | bigint | null }[]>(`SELECT id, v, n FROM ${table} WHERE id LIKE '${prefix}%' ORDER BY id`);
  return out.map((r) => ({ id: r.id, v: r.v, n: r.n === null ? null : Number(r.n) }));
}

const p = async (n: number) => ((await provider()) === "postgresql" ? `$${n}` : "?");

describe("sqlWriteTransaction", () => {
  it("a write is seen by every later read of its table, in the same transaction", async () => {
    const k = unique("seen");
    const { sqlWriteTransaction } = await store();
    const seen = await sqlWriteTransaction(async (sql) => {
      await sql.insert(A, ["id", "v", "n"], [[`${k}-1`, "one", 1], [`${k}-2`, "two", 2]]);
      await sql.write(B, `INSERT INTO ${B} (id, v, n) VALUES (${await p(1)}, ${await p(2)}, ${await p(3)})`, [`${k}-b`, "bee", 3]);
      const a = await sql.all<{ c: number | bigint }>(`SELECT count(*) AS c FROM ${A} WHERE id LIKE ${await p(1)}`, [`${k}%`]);
      const b = await sql.all<{ v: string }>(`SELECT v FROM ${B} WHERE id = ${await p(1)}`, [`${k}-b`]);
      // A second write to a table with one waiting: the first goes first.
      await sql.insert(A, ["id", "v", "n"], [[`${k}-3`, "three", 3]]);
      await sql.run(`UPDATE ${A} SET n = n + 10 WHERE id LIKE ${await p(1)}`, [`${k}%`]);
      const after = await sql.all<{ n: number | bigint }>(`SELECT n FROM ${A} WHERE id LIKE ${await p(1)} ORDER BY id`, [`${k}%`]);
      return { a: Number(a[0].c), b: b.map((r) => r.v), after: after.map((r) => Number(r.n)) };
    });
    expect(seen).toEqual({ a: 2, b: ["bee"], after: [11, 12, 13] });
    expect(await rows(A, k)).toEqual([
      { id: `${k}-1`, v: "one", n: 11 },
      { id: `${k}-2`, v: "two", n: 12 },
      { id: `${k}-3`, v: "three", n: 13 },
    ]);
  });

  it("a write that fails after it waited fails the whole transaction, and nothing of it is stored", async () => {
    const k = unique("fails");
    const { sqlWriteTransaction } = await store();
    await sqlWriteTransaction((sql) => sql.insert(A, ["id", "v", "n"], [[`${k}-taken`, "first", 1]]));
    // Found by a later read of its table…
    await expect(
      sqlWriteTransaction(async (sql) => {
        await sql.insert(B, ["id", "v", "n"], [[`${k}-b1`, "x", 1]]);
        await sql.insert(A, ["id", "v", "n"], [[`${k}-new`, "x", 1], [`${k}-taken`, "again", 2]]);
        await sql.all(`SELECT count(*) AS c FROM ${A}`);
        return "committed";
      }),
    ).rejects.toThrow(/unique|UNIQUE|duplicate/);
    // …or by the commit, when nothing reads it.
    await expect(
      sqlWriteTransaction(async (sql) => {
        await sql.insert(B, ["id", "v", "n"], [[`${k}-b2`, "x", 1]]);
        await sql.insert(A, ["id", "v", "n"], [[`${k}-taken`, "again", 2]]);
        return "committed";
      }),
    ).rejects.toThrow(/unique|UNIQUE|duplicate/);
    expect(await rows(A, k)).toEqual([{ id: `${k}-taken`, v: "first", n: 1 }]);
    expect(await rows(B, k)).toEqual([]);
  });

  it("any value comes back as it went in, through the writes sent with COMMIT", async () => {
    const k = unique("values");
    const hostile = [
      "it's",
      "back\\slash \\' and \\\\",
      "$1 $2 $10 ?",
      "'); DROP TABLE itest_write_a; --",
      "E'x' || chr(39)",
      "line\nbreak\ttab",
      "émoji 😀 中文 \u2028",
      "",
    ];
    const { sqlWriteTransaction } = await store();
    await sqlWriteTransaction(async (sql) => {
      await sql.insert(A, ["id", "v", "n"], hostile.map((v, i) => [`${k}-a${i}`, v, 0 - i]));
      // One write of every value, both writes waiting for COMMIT: they travel as text with it.
      const cells: string[] = [];
      for (let i = 0; i < hostile.length; i++) cells.push(`(${await p(3 * i + 1)}, ${await p(3 * i + 2)}, ${await p(3 * i + 3)})`);
      await sql.write(B, `INSERT INTO ${B} (id, v, n) VALUES ${cells.join(", ")}`, hostile.flatMap((v, i) => [`${k}-b${i}`, v, i === 0 ? null : 2 ** 31 - i]));
      if ((await provider()) === "postgresql") expect((sql as { roundTrips?: number }).roundTrips).toBe(0);
    });
    const a = await rows(A, k);
    const b = await rows(B, k);
    expect(a.map((r) => r.v)).toEqual(hostile);
    expect(a.map((r) => r.n)).toEqual(hostile.map((_, i) => 0 - i));
    expect(b.map((r) => r.v)).toEqual(hostile);
    expect(b.map((r) => r.n)).toEqual(hostile.map((_, i) => (i === 0 ? null : 2 ** 31 - i)));
    const reader = await (await store()).reader();
    expect(Number((await reader.$queryRawUnsafe<{ c: number | bigint }[]>(`SELECT count(*) AS c FROM ${A}`))[0].c)).toBeGreaterThan(0);
  });

  it("writes of more values than one statement may carry still go, each whole", async () => {
    // Three writes of 25,002 values each: together past the 65,535 one statement can carry.
    const k = unique("many");
    const many = (t: string) => Array.from({ length: 8334 }, (_, i) => [`${k}-${t}-${i}`, `v${i}`, i]);
    const { sqlWriteTransaction } = await store();
    const seen = await sqlWriteTransaction(async (sql) => {
      for (const t of [A, B, C]) {
        const rows = many(t);
        const cells: string[] = [];
        for (let i = 0; i < rows.length; i++) cells.push(`(${await p(3 * i + 1)}, ${await p(3 * i + 2)}, ${await p(3 * i + 3)})`);
        await sql.write(t, `INSERT INTO ${t} (id, v, n) VALUES ${cells.join(", ")}`, rows.flat());
      }
      return Number((await sql.all<{ c: number | bigint }>(`SELECT count(*) AS c FROM ${C} WHERE id LIKE ${await p(1)}`, [`${k}%`]))[0].c);
    });
    expect(seen).toBe(8334);
    for (const t of [A, B, C]) expect((await rows(t, k)).length).toBe(8334);
  });

  it("a batch too large to travel with COMMIT as text goes first, and comes back as it went", async () => {
    const k = unique("large");
    const text = "it's \\ $1 😀 ".repeat(2000); // ~28,000 characters a value
    const { sqlWriteTransaction } = await store();
    await sqlWriteTransaction(async (sql) => {
      await sql.insert(A, ["id", "v", "n"], [[`${k}-1`, text, 1], [`${k}-2`, `${text}!`, 2]]);
      await sql.write(B, `INSERT INTO ${B} (id, v, n) VALUES (${await p(1)}, ${await p(2)}, ${await p(3)})`, [`${k}-1`, text, 3]);
    });
    expect(await rows(A, k)).toEqual([
      { id: `${k}-1`, v: text, n: 1 },
      { id: `${k}-2`, v: `${text}!`, n: 2 },
    ]);
    expect(await rows(B, k)).toEqual([{ id: `${k}-1`, v: text, n: 3 }]);
  });

  it("refuses a write that does not name the table it says it writes, and stores nothing of its transaction", async () => {
    const k = unique("named");
    const { sqlWriteTransaction } = await store();
    await expect(
      sqlWriteTransaction(async (sql) => {
        await sql.insert(A, ["id", "v", "n"], [[`${k}-1`, "x", 1]]);
        await sql.write(A, `INSERT INTO ${B} (id, v, n) VALUES (${await p(1)}, ${await p(2)}, ${await p(3)})`, [`${k}-1`, "x", 1]);
      }),
    ).rejects.toThrow(/does not name it/);
    expect(await rows(A, k)).toEqual([]);
    expect(await rows(B, k)).toEqual([]);
  });

  it("on PostgreSQL, a transaction takes the round trips its reads need, and one more", async () => {
    const k = unique("trips");
    const { sqlWriteTransaction } = await store();
    const pg = (await provider()) === "postgresql";
    const trips = await sqlWriteTransaction(async (sql) => {
      await sql.run(`UPDATE ${B} SET n = n WHERE id = 'none'`); // with BEGIN: 1
      await sql.insert(A, ["id", "v", "n"], [[`${k}-1`, "one", 1]]);
      await sql.write(B, `INSERT INTO ${B} (id, v, n) VALUES (${await p(1)}, ${await p(2)}, ${await p(3)})`, [`${k}-1`, "one", 1]);
      await sql.all("SELECT 1 AS one"); // names neither table: 1
      await sql.all(`SELECT id FROM ${A} WHERE id = ${await p(1)}`, [`${k}-1`]); // the writes, then the read: 2
      await sql.insert(A, ["id", "v", "n"], [[`${k}-2`, "two", 2]]);
      await sql.write(B, `INSERT INTO ${B} (id, v, n) VALUES (${await p(1)}, ${await p(2)}, ${await p(3)})`, [`${k}-2`, "two", 2]);
      return (sql as { roundTrips?: number }).roundTrips; // and COMMIT with the last writes: 1
    });
    if (pg) expect(trips).toBe(4); // counted before COMMIT's
    else expect(trips).toBeUndefined(); // SQLite runs in this process: no round trips to save
    expect((await rows(A, k)).map((r) => r.id)).toEqual([`${k}-1`, `${k}-2`]);
    expect((await rows(B, k)).map((r) => r.id)).toEqual([`${k}-1`, `${k}-2`]);
  });
});
