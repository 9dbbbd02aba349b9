/**
 * bench:ingest's second PostgreSQL ceiling: every row ingest wrote, written again by the `pg`
 * driver alone. The rows of the operations the batched run stored are read back from the bench
 * database (chain records, identities, views, search keys, both search tables, audit samples;
 * the three rollup tables' rows, one upsert each a transaction, as ingest adds to them) and
 * written into copies of those tables (same columns and indexes), 100 operations a transaction,
 * durable, by two methods: `json`, each transaction one statement of JSON documents and COMMIT
 * (ingest's own method), and `copy`, COPY … FROM STDIN of each table's rows (the rollups' upserts
 * as one statement) and COMMIT; the better one is the ceiling. No parsing, validation, hashing or
 * deciding: what the database itself costs for the rows, and the transport. The three-table
 * ceiling (rawPostgresRate) leaves out the derived rows; this one is what ingest could reach if
 * its own work cost nothing.
 */
import pg from "pg";
import { copyRows } from "./pg-copy";

/** Where each table's rows are found for a group of operations. */
const BY_SEQ: Record<string, string> = {
  chain_records: "op_seq",
  operations: "created_seq",
  operation_views: "created_seq",
  operation_keys: "created_seq",
  operation_search: "created_seq",
  operation_search_text: "created_seq",
};
const ROLLUPS = ["metric_rollups", "outcome_rollups"];

type Row = Record<string, unknown>;

export async function replayCeiling(
  url: string,
  operationPrefix: string,
  perTransaction = 100,
): Promise<{ rate: number; rates: { json: number; copy: number }; operations: number; statementBytes: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const ops = (await client.query<{ id: string; s: number }>("SELECT operation_id AS id, created_seq AS s FROM operations WHERE operation_id LIKE $1 ORDER BY created_seq", [`${operationPrefix}%`])).rows;
    const seqs = ops.map((o) => o.s);
    const opIds = new Map(ops.map((o) => [o.id, o.s]));
    const lo = seqs[0];
    const hi = seqs[seqs.length - 1];
    const tables = [...Object.keys(BY_SEQ), "audit_samples", ...ROLLUPS];
    const columns = new Map<string, { name: string; type: string }[]>();
    for (const t of tables) {
      const r = await client.query<{ column_name: string; udt_name: string }>(
        "SELECT column_name, udt_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
        [t],
      );
      columns.set(t, r.rows.map((c) => ({ name: c.column_name, type: c.udt_name })));
    }
    // Every row, by the created_seq of its operation.
    const rowsBySeq = new Map<string, Map<number, Row[]>>();
    for (const [t, key] of Object.entries(BY_SEQ)) {
      const m = new Map<number, Row[]>();
      for (const { j } of (await client.query<{ j: Row }>(`SELECT to_jsonb(t) AS j FROM ${t} t WHERE ${key} BETWEEN $1 AND $2`, [lo, hi])).rows) {
        const s = Number(j[key]);
        if (!m.has(s)) m.set(s, []);
        m.get(s)!.push(j);
      }
      rowsBySeq.set(t, m);
    }
    const samples = new Map<number, Row[]>();
    for (const { j } of (await client.query<{ j: Row }>("SELECT to_jsonb(t) AS j FROM audit_samples t WHERE operation_id LIKE $1", [`${operationPrefix}%`])).rows) {
      const s = opIds.get(String(j.operation_id))!;
      samples.set(s, [...(samples.get(s) ?? []), j]);
    }
    rowsBySeq.set("audit_samples", samples);
    const rollupRows = new Map<string, Row[]>();
    for (const t of ROLLUPS) rollupRows.set(t, (await client.query<{ j: Row }>(`SELECT to_jsonb(t) AS j FROM ${t} t`)).rows.map((r) => r.j));
    const keyOf = new Map<string, string[]>();
    for (const t of ROLLUPS) {
      const r = await client.query<{ attname: string }>(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = $1::regclass AND i.indisprimary",
        [t],
      );
      keyOf.set(t, r.rows.map((c) => c.attname));
    }

    const insertOf = (t: string, n: number) => {
      const cols = columns.get(t)!;
      const text = `INSERT INTO replay_${t} (${cols.map((c) => c.name).join(", ")}) SELECT ${cols.map((c) => `(r->>'${c.name}')::${c.type}`).join(", ")} FROM jsonb_array_elements($${n}::jsonb) AS r`;
      if (!ROLLUPS.includes(t)) return text;
      const key = keyOf.get(t)!;
      const counts = cols.filter((c) => !key.includes(c.name) && c.type === "int4").map((c) => c.name);
      return `${text} ON CONFLICT (${key.join(", ")}) DO UPDATE SET ${counts.map((c) => `${c} = replay_${t}.${c} + excluded.${c}`).join(", ")}`;
    };
    const rowsOf = (t: string, group: number[]) => (ROLLUPS.includes(t) ? rollupRows.get(t)! : group.flatMap((s) => rowsBySeq.get(t)!.get(s) ?? []));

    let statementBytes = 0;
    const run = async (method: "json" | "copy") => {
      // The JSON documents' size, the same in either JSON run.
      if (method === "json") statementBytes = 0;
      for (const t of tables) {
        await client.query(`DROP TABLE IF EXISTS replay_${t}`);
        await client.query(`CREATE TABLE replay_${t} (LIKE ${t} INCLUDING DEFAULTS INCLUDING INDEXES)`);
      }
      const t0 = performance.now();
      for (let i = 0; i < seqs.length; i += perTransaction) {
        const group = seqs.slice(i, i + perTransaction);
        const parts: string[] = [];
        const values: string[] = [];
        await client.query("BEGIN");
        for (const t of tables) {
          const rows = rowsOf(t, group);
          if (!rows.length) continue;
          if (method === "copy" && !ROLLUPS.includes(t)) {
            const names = columns.get(t)!.map((c) => c.name);
            await copyRows(client, `replay_${t}`, names, rows.map((r) => names.map((n) => r[n])));
            continue;
          }
          values.push(JSON.stringify(rows));
          parts.push(`w${parts.length} AS (${insertOf(t, values.length)})`);
        }
        if (method === "json") for (const v of values) statementBytes += v.length;
        if (parts.length) await client.query(`WITH ${parts.join(", ")} SELECT 1`, values);
        await client.query("COMMIT");
      }
      const rate = seqs.length / ((performance.now() - t0) / 1000);
      for (const t of tables) await client.query(`DROP TABLE replay_${t}`);
      return rate;
    };
    // Each method twice, in both orders, its better run kept: neither gains from going second.
    const rates = { json: await run("json"), copy: await run("copy") };
    rates.copy = Math.max(rates.copy, await run("copy"));
    rates.json = Math.max(rates.json, await run("json"));
    return { rate: Math.max(rates.json, rates.copy), rates, operations: seqs.length, statementBytes };
  } finally {
    await client.end();
  }
}
