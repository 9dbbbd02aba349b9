/**
 * Two app instances on one PostgreSQL, ingesting at once (docs/DEPLOY.md): the chain is
 * serialised across instances by the lock row, so it stays one gapless, verifiable chain, and
 * the same operation sent to both instances at once is stored once.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { splitRecord } from "@/lib/domain/stages";
import { disconnect } from "@/lib/store/db";
import { verifyStoredChain } from "@/lib/store/verify-chain";
import { fullRecord, prepareDatabase, startApp, type App, type Tokens } from "./harness";
import { divergentRecord } from "./harness";

const url = process.env.RELIABILITY_DATABASE_URL!;
let apps: App[] = [];
let tokens: Tokens;

beforeAll(async () => {
  if (!url?.startsWith("postgres")) throw new Error("RELIABILITY_DATABASE_URL must name a PostgreSQL database for this test");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("DROP SCHEMA IF EXISTS public CASCADE");
  await client.query("CREATE SCHEMA public");
  await client.end();
  tokens = (await prepareDatabase(url, "instances")).tokens;
  apps = await Promise.all([startApp(url), startApp(url)]);
}, 180_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await disconnect();
});

const post = async (app: App, path: string, token: string, body: unknown) => {
  const res = await fetch(app.base + path, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

it("two instances ingest at once into one PostgreSQL: one gapless chain that verifies, each record once", async () => {
  const statuses: number[] = [];
  const sent: ReturnType<typeof fullRecord>[] = [];
  let n = 0;
  // 8 clients, each alternating between the instances; batches and single records.
  await Promise.all(
    Array.from({ length: 8 }, async (_, c) => {
      for (let i = 0; i < 12; i++) {
        const app = apps[(c + i) % 2];
        const records = Array.from({ length: i % 3 === 0 ? 1 : 25 }, () => fullRecord(`inst-${++n}-${c}`, `inst-run-${c}`));
        sent.push(...records);
        const r = await post(app, "/api/v1/receipts", tokens.ingest, records.length === 1 ? records[0] : { records });
        statuses.push(r.status);
      }
    }),
  );
  // The same operations sent to both instances at the same moment: stored once.
  const same = Array.from({ length: 20 }, (_, i) => divergentRecord(`inst-same-${i}`, "inst-same"));
  const twice = await Promise.all(apps.map((app) => post(app, "/api/v1/receipts", tokens.ingest, { records: same })));
  expect(twice.map((r) => r.status)).toEqual([200, 200]);
  const duplicates = twice.flatMap((r) => (r.body.results as { duplicate?: boolean }[]).map((x) => x.duplicate));
  expect(duplicates.filter((d) => d === false)).toHaveLength(20);

  // Corrections on one operation through both instances with the same expected state: one wins.
  const race = await Promise.all(
    apps.map((app) =>
      post(app, "/api/v1/operations/inst-same-0/corrections", tokens.review, { action: "resolve", outcome: "not_applied", reason: "absent on the profile", expected_last_correction_id: null }),
    ),
  );
  expect(race.map((r) => r.status).sort()).toEqual([201, 409]);

  expect(statuses.every((s) => s === 200 || s === 201)).toBe(true);
  process.env.DATABASE_URL = url;
  const { verdict } = await verifyStoredChain();
  expect(verdict).toMatchObject({ ok: true });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const seqs = await client.query("SELECT min(seq)::int AS lo, max(seq)::int AS hi, count(*)::int AS n FROM chain_records");
    expect(seqs.rows[0].n).toBe(seqs.rows[0].hi - seqs.rows[0].lo + 1);
    expect(verdict.count).toBe(seqs.rows[0].n);
    const stages = await client.query("SELECT operation_id, count(*)::int AS n FROM chain_records WHERE kind = 'stage' AND operation_id LIKE 'inst-%' GROUP BY operation_id");
    const per = new Map(stages.rows.map((r) => [r.operation_id as string, r.n as number]));
    for (const r of sent) expect(per.get(r.operation_id)).toBe(splitRecord(r).length);
    for (const r of same) expect(per.get(r.operation_id)).toBe(splitRecord(r).length);
    const corrections = await client.query("SELECT count(*)::int AS n FROM chain_records WHERE kind = 'correction' AND operation_id = 'inst-same-0'");
    expect(corrections.rows[0].n).toBe(1);
  } finally {
    await client.end();
  }
});
