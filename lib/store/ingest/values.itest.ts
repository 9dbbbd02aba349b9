import { beforeAll, expect, inject, it } from "vitest";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";
import { runCliSync } from "@/lib/testing/cli";

/**
 * Ingest's hot path hands rows to each database's own connection: SQLite's direct connection
 * (sqlite-direct.ts) and PostgreSQL's pool (pg-direct.ts), which sends an INSERT's rows as one
 * JSON document the server unpacks. Whatever a value looks like (quotes, backslashes, escapes,
 * JSON, the words null and true, digits with leading zeros), it is stored as sent, the answer
 * and the stored operation agree, and the chain verifies.
 */
let token: string;
beforeAll(async () => {
  token = (await principal("reviewer", ["ingest", "verify", "read"])).token;
});

const hostile = [
  "null",
  "true",
  "007",
  "1e400",
  `it's "quoted" \\ back\\slashed`,
  "\\u0041 is not A",
  '{"a": [1, 2]}',
  "r->>0",
  "emoji 🧾 and ñ, 환불, データ",
  "tab\tnew\nline",
  "x".repeat(5000),
  // The search document cuts a value at 300 UTF-16 units: here, between the halves of the emoji.
  `${"b".repeat(299)}😀 after the cut`,
];

it("stores every value as sent, in batches larger than one slice of rows, and the chain verifies", { timeout: 120_000 }, async () => {
  const run = unique("vals");
  const word = `zq${run.replace(/[^a-z0-9]/gi, "")}`;
  const records = Array.from({ length: 450 }, (_, i) => {
    const text = hostile[i % hostile.length];
    return {
      operation_id: `${run}-${i}`,
      trajectory_id: i % 2 ? "null" : `${run}-traj`,
      tool: { name: i % 3 ? "null" : "true", version: "007" },
      agent: { name: text.slice(0, 100) },
      claimed_outcome: "success",
      intent: { target: text.slice(0, 4096), effect: `${text.slice(0, 4000)} ${word}`, params: { text, n: i, nested: { text, list: [text, null, true, 0] } } },
      receipt: { status: "accepted", receipt_id: `${run}-r-${i}`, observed_at: "2026-08-28T10:00:00Z", params: { text } },
      canonical_read: { status: "match", observed_at: "2026-08-28T10:01:00Z", evidence: { object_id: `${run}-o-${i}`, text } },
    };
  });
  // One request: 450 operations of three stage records each, 1,350 rows of chain_records in one
  // statement, more than one slice of the rows that the writer builds between turns (1,024).
  const res = await ingest(token, { records });
  expect(res.status).toBe(200);
  expect(res.body.results.map((r: { status: number }) => r.status)).toEqual(records.map(() => 201));
  for (const i of [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 449]) {
    const sent = records[i];
    const op = (await call(`/api/v1/operations/${sent.operation_id}`, { token })).body;
    expect(op.operation_id).toBe(sent.operation_id);
    expect(op.trajectory_id).toBe(sent.trajectory_id);
    expect(op.tool).toEqual(sent.tool);
    const intent = op.stages.find((s: { stage: string }) => s.stage === "intent").payload;
    expect(intent.params).toEqual(sent.intent.params);
    expect(intent.target).toBe(sent.intent.target);
    expect(intent.target.length).toBe(Math.min(4096, hostile[i % hostile.length].length));
    expect(op.outcome).toBe("verified");
  }
  // The projection's columns hold text, not SQL NULL or a boolean: "null" and "true" are tools.
  const client = await db();
  const tools = await client.$queryRawUnsafe<{ tool: string | null; n: number | bigint }[]>(
    `SELECT tool, COUNT(*) AS n FROM operation_views WHERE operation_id LIKE '${run}-%' GROUP BY tool ORDER BY tool`,
  );
  expect(tools.map((t) => [t.tool, Number(t.n)])).toEqual([
    ["null", 300],
    ["true", 150],
  ]);
  // Found by a receipt id, through the search keys written on the same path.
  const found = (await call(`/api/v1/operations?q=${encodeURIComponent(`${run}-r-449`)}`, { token })).body;
  expect(found.items.map((o: { operation_id: string }) => o.operation_id)).toContain(`${run}-449`);
  // Found by a word of their text, through the search documents written on the same path.
  const byWord = (await call(`/api/v1/operations?q=${word}&limit=200`, { token })).body;
  expect(byWord.items).toHaveLength(200);
  expect(byWord.items.every((o: { operation_id: string }) => o.operation_id.startsWith(`${run}-`))).toBe(true);
  // The one cut inside an emoji is stored and found too (PostgreSQL refuses half of one in JSON).
  const cutOne = records.findIndex((r) => r.intent.target.startsWith("bbb"));
  const cutFound = (await call(`/api/v1/operations?q=${encodeURIComponent(`${run}-r-${cutOne}`)}`, { token })).body;
  expect(cutFound.items.map((o: { operation_id: string }) => o.operation_id)).toContain(`${run}-${cutOne}`);

  if (!inject("databaseUrl").startsWith("file:")) {
    // On PostgreSQL these rows went through the ingest pool (pg-direct.ts), not Prisma's.
    const [pool] = await client.$queryRawUnsafe<{ n: number | bigint }[]>(
      "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE application_name = 'reconcile-ingest' AND datname = current_database()",
    );
    expect(Number(pool.n)).toBeGreaterThan(0);
  }

  const verify = runCliSync(["audit:verify"]);
  expect(verify.stderr).toBe("");
  expect(verify.stdout).toMatch(/chain intact/);
});
