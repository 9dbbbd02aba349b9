/**
 * bench:ingest's COPY ceiling writes rows in COPY's text format (pg-copy.ts). Round trip through
 * a real PostgreSQL: every awkward value comes back as it went in, so the ceiling stores the
 * same rows the JSON method does.
 */
import pg from "pg";
import { expect, it } from "vitest";
import { copyRows } from "./pg-copy";

it("rows COPYed in text format read back unchanged: NULL, booleans, numbers, escapes, JSON, tsvector", async () => {
  const url = process.env.RELIABILITY_DATABASE_URL;
  if (!url?.startsWith("postgres")) throw new Error("RELIABILITY_DATABASE_URL must name a PostgreSQL database for this test");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query("CREATE TEMP TABLE copy_probe (n int4, b bool, t text, j jsonb, v tsvector) ON COMMIT DROP");
    const awkward = 'back\\slash\ttab\nnewline\rreturn "quote" \'apostrophe\' \\N ü 💡';
    const rows = [
      [1, true, awkward, { text: awkward, list: [1, null] }, "'a':1A 'b':2"],
      [2, false, "", null, null],
      [3, null, null, {}, "'x'"],
    ];
    await copyRows(client, "copy_probe", ["n", "b", "t", "j", "v"], rows);
    const back = await client.query("SELECT n, b, t, j, v::text AS v FROM copy_probe ORDER BY n");
    await client.query("COMMIT");
    expect(back.rows).toEqual([
      { n: 1, b: true, t: awkward, j: { text: awkward, list: [1, null] }, v: "'a':1A 'b':2" },
      { n: 2, b: false, t: "", j: null, v: null },
      { n: 3, b: null, t: null, j: {}, v: "'x'" },
    ]);
  } finally {
    await client.end();
  }
});
