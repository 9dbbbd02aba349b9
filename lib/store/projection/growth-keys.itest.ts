import { readdirSync, readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";

/**
 * Issue 17, flat ingest cost: an operation's chain records are found by op_seq (its
 * created_seq) and its search keys are stored under its created_seq, so that new operations
 * append to those indexes. These tests hold the readers to that, and the growth_keys
 * migration's backfill to what the projection writes.
 */
let token: string;
let reviewer: string;
beforeAll(async () => {
  token = (await principal("reviewer", ["ingest", "verify", "read", "review"])).token;
  reviewer = (await principal("reviewer", ["read", "review"])).token;
});

/** Statements of a migration file; a CREATE TRIGGER … BEGIN … END; is one. */
function statements(sql: string): string[] {
  const out: string[] = [];
  let current = "";
  for (const line of sql.split("\n")) {
    if (/^\s*--/.test(line) || !line.trim()) continue;
    current += `${line}\n`;
    const inTrigger = /^\s*CREATE TRIGGER/i.test(current) && !/^END;\s*$/im.test(current);
    if (/;\s*$/.test(line) && !inTrigger) {
      out.push(current.trim().replace(/;$/, ""));
      current = "";
    }
  }
  return out;
}

async function ingestOne(tool: string) {
  const id = unique(`${tool}-op`);
  const r = await ingest(token, {
    operation_id: id,
    tool: { name: tool },
    claimed_outcome: "success",
    intent: { target: "t", effect: "e", params: { a: 1 } },
    receipt: { status: "accepted", receipt_id: `${id}-rcpt`, observed_at: new Date(Date.now() - 60_000).toISOString(), params: { a: 1 } },
    canonical_read: [{ status: "absent", observed_at: new Date().toISOString() }],
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return id;
}

describe("operations found by created_seq", () => {
  it("records carry their operation's created_seq; keys are receipt and evidence ids, not the operation's own", async () => {
    const tool = unique("growth.tool");
    const a = await ingestOne(tool);
    const b = await ingestOne(tool);
    // A later read of a: appended long after a's first records, still found under a.
    const late = await ingest(token, { operation_id: a, canonical_read: [{ status: "match", observed_at: new Date().toISOString(), evidence: { object_id: `${a}-obj` } }] });
    expect(late.status, JSON.stringify(late.body)).toBe(200);
    const note = await call(`/api/v1/operations/${encodeURIComponent(b)}/comments`, { token: reviewer, method: "POST", body: { text: "checked by hand" } });
    expect(note.status, JSON.stringify(note.body)).toBe(201);

    const client = await db();
    const ops = await client.operation.findMany({ where: { operationId: { in: [a, b] } } });
    const seqOf = new Map(ops.map((o) => [o.operationId, o.createdSeq]));
    const records = await client.chainRecord.findMany({ where: { operationId: { in: [a, b] } }, orderBy: { seq: "asc" } });
    expect(records.length).toBe(3 + 1 + 3 + 1);
    for (const r of records) expect(r.opSeq).toBe(seqOf.get(r.operationId!));
    expect(records.find((r) => r.operationId === a)!.seq).toBe(seqOf.get(a));
    const keys = await client.operationKey.findMany({ where: { createdSeq: { in: [seqOf.get(a)!, seqOf.get(b)!] } } });
    // Sorted here: PostgreSQL's collation orders punctuation otherwise.
    const byKey = (x: { key: string }, y: { key: string }) => (x.key < y.key ? -1 : 1);
    const wanted = [
      { key: `${a}-obj`, createdSeq: seqOf.get(a) },
      { key: `${a}-rcpt`, createdSeq: seqOf.get(a) },
      { key: `${b}-rcpt`, createdSeq: seqOf.get(b) },
    ];
    expect(keys.sort(byKey)).toEqual(wanted.sort(byKey));

    // What reads by operation sees them: the page (stages, the later read, the note) and search.
    const detail = await call(`/api/v1/operations/${encodeURIComponent(a)}`, { token });
    expect(detail.status).toBe(200);
    expect(detail.body.outcome).toBe("verified");
    const page = await call(`/api/v1/operations/${encodeURIComponent(b)}/comments`, { token });
    expect(page.body.comments.map((c: { text: string }) => c.text)).toEqual(["checked by hand"]);
    for (const [q, want] of [
      [a, [a]],
      [`${a}-o`, [a]],
      [`${b}-rc`, [b]],
      [tool.slice(0, -2), []],
    ] as const) {
      const found = await call(`/api/v1/operations?q=${encodeURIComponent(q)}`, { token });
      expect(found.status).toBe(200);
      const ids = found.body.items.map((i: { operation_id: string }) => i.operation_id);
      if (want.length) expect(ids.slice(0, want.length), q).toEqual(want);
    }
  });
});

describe("the growth_keys migration's backfill", () => {
  it("fills op_seq and the keys as the projection writes them, from the old shape", async () => {
    const { provider } = await import("@/lib/store/db/database");
    const pg = provider() === "postgresql";
    const client = await db();
    await ingestOne(unique("growth.migrated"));
    const records = async () => (await client.chainRecord.findMany({ select: { seq: true, opSeq: true }, orderBy: { seq: "asc" } })).map((r) => [r.seq, r.opSeq]);
    const keys = async () => (await client.operationKey.findMany({ orderBy: [{ key: "asc" }, { createdSeq: "asc" }] })).map((k) => [k.key, k.createdSeq]);
    const want = { records: await records(), keys: await keys() };
    expect(want.records.some(([, op]) => op === null)).toBe(true); // security records belong to no operation

    // Back to the shape before the migration: no op_seq, keys by operation id (its own id among them).
    const run = (sql: string) => client.$executeRawUnsafe(sql);
    await run('DROP INDEX "chain_records_op_seq_seq_idx"');
    await run('ALTER TABLE "chain_records" DROP COLUMN "op_seq"');
    await run('CREATE INDEX "chain_records_operation_id_seq_idx" ON "chain_records"("operation_id", "seq")');
    await run('DROP TABLE "operation_keys"');
    await run('CREATE TABLE "operation_keys" ("key" TEXT NOT NULL, "operation_id" TEXT NOT NULL, PRIMARY KEY ("key", "operation_id"))');
    await run('CREATE INDEX "operation_keys_operation_id_idx" ON "operation_keys"("operation_id")');
    const ops = await client.operation.findMany({ select: { operationId: true, createdSeq: true } });
    const idOf = new Map(ops.map((o) => [o.createdSeq, o.operationId]));
    const old = [...want.keys.map(([key, seq]) => [key as string, idOf.get(seq as number)!]), ...ops.map((o) => [o.operationId, o.operationId])];
    for (const [key, id] of old) await client.$executeRawUnsafe(`INSERT INTO operation_keys (key, operation_id) VALUES (${pg ? "$1, $2" : "?, ?"})`, key, id);

    const dir = `prisma/migrations/${provider()}`;
    const folder = readdirSync(dir).find((d) => d.endsWith("_growth_keys"))!;
    for (const s of statements(readFileSync(`${dir}/${folder}/migration.sql`, "utf8"))) await run(s);

    expect(await records()).toEqual(want.records);
    expect(await keys()).toEqual(want.keys);
    // The table is still append-only after the backfill.
    await expect(run('UPDATE "chain_records" SET "op_seq" = 1')).rejects.toThrow(/append-only/);
  });
});

describe("op_seq is checked by audit:verify", () => {
  it("a record moved to another operation, or left without one, is reported by seq; put back, the chain verifies", async () => {
    const { provider } = await import("@/lib/store/db/database");
    const { verifyStoredChain } = await import("@/lib/store/chain/verify-chain");
    const pg = provider() === "postgresql";
    const client = await db();
    const tool = unique("growth.verify");
    const a = await ingestOne(tool);
    const b = await ingestOne(tool);
    const [ra, rb] = [a, b].map(async (id) => (await client.operation.findUniqueOrThrow({ where: { operationId: id } })).createdSeq);
    const [sa, sb] = [await ra, await rb];
    const victim = (await client.chainRecord.findFirstOrThrow({ where: { operationId: b, seq: { gt: sb } } })).seq;
    const set = async (value: number | null) => {
      // Past the append-only guard, as an attacker with the database would be.
      if (pg) await client.$executeRawUnsafe('ALTER TABLE "chain_records" DISABLE TRIGGER "chain_records_append_only"');
      else await client.$executeRawUnsafe('DROP TRIGGER "chain_records_no_update"');
      await client.$executeRawUnsafe(`UPDATE chain_records SET op_seq = ${value === null ? "NULL" : value} WHERE seq = ${victim}`);
      if (pg) await client.$executeRawUnsafe('ALTER TABLE "chain_records" ENABLE TRIGGER "chain_records_append_only"');
      else await client.$executeRawUnsafe(`CREATE TRIGGER "chain_records_no_update" BEFORE UPDATE ON "chain_records"\nBEGIN\n    SELECT RAISE(ABORT, 'chain_records is append-only');\nEND`);
    };
    try {
      await set(sa); // b's read now shows on a's page
      let { verdict } = await verifyStoredChain();
      expect(verdict).toMatchObject({ ok: false, badSeq: victim });
      expect(verdict.ok === false && verdict.problem).toMatch(/op_seq/);
      await set(null);
      ({ verdict } = await verifyStoredChain());
      expect(verdict).toMatchObject({ ok: false, badSeq: victim, problem: expect.stringMatching(/op_seq is missing/) });
    } finally {
      await set(sb);
    }
    expect((await verifyStoredChain()).verdict.ok).toBe(true);
  });
});

