/**
 * Two app instances on one PostgreSQL, ingesting at once (docs/DEPLOY.md): each chain is
 * serialised across instances by its lock row, so it stays gapless and verifiable, and the same
 * operation sent to both instances at once is stored once. Run with one chain and with four
 * (RECONCILE_CHAINS, lib/domain/chains.ts), each on a database of its own.
 */
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { chainOf } from "@/lib/domain/chains";
import { splitRecord } from "@/lib/domain/stages";
import { disconnect } from "@/lib/store/db/db";
import { verifyStoredChain } from "@/lib/store/chain/verify-chain";
import { fullRecord, prepareDatabase, siblingDatabase, startApp, type App } from "./harness";
import { divergentRecord } from "./harness";

const base = process.env.RELIABILITY_DATABASE_URL!;
const made: (() => Promise<void>)[] = [];

/** An empty database for this run: the one named, or a new one beside it (dropped afterwards). */
async function database(chains: number): Promise<string> {
  if (!base?.startsWith("postgres")) throw new Error("RELIABILITY_DATABASE_URL must name a PostgreSQL database for this test");
  if (chains > 1) {
    const db = await siblingDatabase(base, `chains${chains}`);
    made.push(db.drop);
    return db.url;
  }
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  await client.query("DROP SCHEMA IF EXISTS public CASCADE");
  await client.query("CREATE SCHEMA public");
  await client.end();
  return base;
}

let apps: App[] = [];

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await disconnect();
  for (const drop of made) await drop();
});

const post = async (app: App, path: string, token: string, body: unknown) => {
  const res = await fetch(app.base + path, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

it.each([1, 4])("two instances ingest at once into one PostgreSQL with %i chain(s): each chain gapless and verified, each record once", async (chains) => {
  await Promise.all(apps.map((a) => a.stop()));
  const url = await database(chains);
  const { tokens } = await prepareDatabase(url, `instances-${chains}`, { chains });
  apps = await Promise.all([startApp(url, { env: { RECONCILE_CHAINS: String(chains) } }), startApp(url, { env: { RECONCILE_CHAINS: String(chains) } })]);
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
  if (chains > 1) expect(verdict).toMatchObject({ chains: expect.any(Array) });
  expect(verdict).toMatchObject({ ok: true });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Each operation's records on its chain; each chain as long as its lock row says (every
    // link was checked by verifyStoredChain above); one chain's seqs step by one.
    const all = (await client.query("SELECT seq, operation_id FROM chain_records ORDER BY seq")).rows as { seq: number; operation_id: string | null }[];
    const locks = (await client.query("SELECT id, head_records FROM chain_lock WHERE id >= 1 ORDER BY id")).rows as { id: number; head_records: number | null }[];
    for (let c = 0; c < chains; c++) {
      const mine = all.filter((r) => chainOf(r.operation_id, chains) === c).map((r) => r.seq);
      expect(mine.length).toBeGreaterThan(0);
      if (chains === 1) expect(mine).toEqual(mine.map((_, k) => k + 1));
      else expect(locks[c].head_records).toBe(mine.length);
    }
    expect(verdict.count).toBe(all.length);
    expect((await client.query("SELECT chains FROM chain_settings")).rows[0].chains).toBe(chains);
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
