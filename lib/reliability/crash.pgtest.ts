/**
 * The crash-safety harness (crash.ts) on PostgreSQL, with one hash chain and with four: the
 * server is killed with SIGKILL under concurrent ingest, again and again. Its ingest connection
 * (lib/store/db/pg-direct.ts) sends writes late and together, the last of them with COMMIT in one
 * message: a kill at any point of that must still leave every acknowledged request stored, each
 * request all or nothing, the projection agreeing with the records, and every chain verifying.
 */
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { chainOf } from "@/lib/domain/chains";
import { disconnect } from "@/lib/store/db/db";
import { runCrashTrials } from "./crash";
import { expectPromisesHeld } from "./crash-checks";
import { siblingDatabase } from "./harness";

const base = process.env.RELIABILITY_DATABASE_URL!;
const made: (() => Promise<void>)[] = [];

afterAll(async () => {
  await disconnect();
  for (const drop of made) await drop();
});

async function database(suffix: string): Promise<string> {
  if (!base?.startsWith("postgres")) throw new Error("RELIABILITY_DATABASE_URL must name a PostgreSQL database for this test");
  const db = await siblingDatabase(base, suffix);
  made.push(db.drop);
  return db.url;
}

const TRIALS = Math.ceil(Number(process.env.RELIABILITY_CRASH_TRIALS || 20) / 2);

it.each([1, 4])(`${TRIALS} SIGKILLs under concurrent ingest on PostgreSQL with %i chain(s): nothing acknowledged is lost, nothing is half-written, every chain verifies`, async (chains) => {
  const url = await database(`crash${chains}`);
  const report = await runCrashTrials({ url, trials: TRIALS, chains });
  expectPromisesHeld(report, TRIALS);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    expect((await client.query("SELECT chains FROM chain_settings")).rows[0].chains).toBe(chains);
    if (chains > 1) {
      // Every chain was used, and each lock row names its chain's last record and count.
      const rows = (await client.query<{ seq: string; operation_id: string | null }>("SELECT seq, operation_id FROM chain_records ORDER BY seq")).rows;
      const perChain = Array.from({ length: chains }, (_, c) => rows.filter((r) => chainOf(r.operation_id, chains) === c));
      const locks = (await client.query<{ hi: string; n: string }>("SELECT head_seq AS hi, head_records AS n FROM chain_lock WHERE id >= 1 ORDER BY id")).rows;
      expect(perChain.every((mine) => mine.length > 0)).toBe(true);
      expect(locks.map((l) => ({ n: Number(l.n), hi: Number(l.hi) }))).toEqual(perChain.map((mine) => ({ n: mine.length, hi: Number(mine.at(-1)!.seq) })));
    }
  } finally {
    await client.end();
  }
});
