import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, it } from "vitest";
import { chainOf } from "@/lib/domain/chains";
import { runCrashTrials } from "./crash";
import { expectPromisesHeld } from "./crash-checks";

const dir = mkdtempSync(path.join(os.tmpdir(), "reconcile-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("20 SIGKILLs under concurrent ingest: nothing acknowledged is lost, nothing is half-written, the chain verifies, retries converge", async () => {
  const trials = Number(process.env.RELIABILITY_CRASH_TRIALS || 20);
  const report = await runCrashTrials({ url: `file:${path.join(dir, "crash.db")}`, trials });
  expectPromisesHeld(report, trials);
});

it("10 SIGKILLs under concurrent ingest into four hash chains: the same promises, every chain verifies", async () => {
  const trials = Math.ceil(Number(process.env.RELIABILITY_CRASH_TRIALS || 20) / 2);
  const report = await runCrashTrials({ url: `file:${path.join(dir, "crash-chains.db")}`, trials, chains: 4 });
  expectPromisesHeld(report, trials);
  const db = new Database(path.join(dir, "crash-chains.db"), { readonly: true });
  try {
    expect(db.prepare("SELECT chains FROM chain_settings").get()).toEqual({ chains: 4 });
    // Every chain was used, and each holds what its lock row says, up to the head it names
    // (verifyStoredChain checked every link after every kill).
    const rows = db.prepare("SELECT seq, operation_id FROM chain_records ORDER BY seq").all() as { seq: number; operation_id: string | null }[];
    const perChain = Array.from({ length: 4 }, (_, c) => rows.filter((r) => chainOf(r.operation_id, 4) === c));
    const locks = db.prepare("SELECT head_seq AS hi, head_records AS n FROM chain_lock WHERE id >= 1 ORDER BY id").all() as { hi: number; n: number }[];
    expect(perChain.every((mine) => mine.length > 0)).toBe(true);
    expect(locks).toEqual(perChain.map((mine) => ({ n: mine.length, hi: mine.at(-1)!.seq })));
  } finally {
    db.close();
  }
});
