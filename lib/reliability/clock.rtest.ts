/**
 * Clock faults (issue 35, part 5): the server's clock jumps an hour forward, then two hours back,
 * while eight writers ingest (RELIABILITY_CLOCK_RUNS times over; once in `npm test`). The jump is the server's alone, through a fake-time layer preloaded
 * into it (testing/fake-clock.mjs; the machine's clock is never touched). Afterwards:
 *   - every acknowledged record is stored, seq runs 1..N without a gap, the chain verifies, and
 *     every operation has the verdict its records give (the clock decides none of them);
 *   - records carry the server's notion of time (a jumped `recorded_at`: the layer was in effect);
 *   - the clock-skew rule judges `observed_at` against the server's time: with the clock an hour
 *     back, a read observed at the machine's "now" is an hour in the future and refused; with it
 *     an hour ahead, one observed half an hour past the machine's now is taken.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { divergentRecord, prepareDatabase, startApp, type App, type Tokens } from "./harness";
import { runCli } from "@/lib/testing/cli";

const HOUR = 3_600_000;
/** RELIABILITY_CLOCK_RUNS: the jumps (0, +1 h, -1 h, 0) this many times (`npm run soak:faults -- --fault clock --runs N`). */
const RUNS = Math.max(1, Number(process.env.RELIABILITY_CLOCK_RUNS ?? 1));
const dir = mkdtempSync(path.join(os.tmpdir(), "reconcile-clock-"));
const file = path.join(dir, "reconcile.db");
const url = `file:${file}`;
const clock = path.join(dir, "offset");
let app: App;
let tokens: Tokens;

/** Sets the server's clock to the machine's plus `ms`, and waits until the server has read it. */
async function jump(ms: number) {
  writeFileSync(clock, String(ms));
  await new Promise((r) => setTimeout(r, 100));
}

beforeAll(async () => {
  writeFileSync(clock, "0");
  tokens = (await prepareDatabase(url, "clock")).tokens;
  app = await startApp(url, { env: { NODE_OPTIONS: `--import ${path.resolve("lib/reliability/testing/fake-clock.mjs")}`, RECONCILE_FAKE_CLOCK_FILE: clock } });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const post = async (token: string, body: unknown) => {
  const res = await fetch(`${app.base}/api/v1/receipts`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
};

const cli = (args: string[]) => runCli(url, args);

describe("the server's clock jumps under ingest", () => {
  it("an hour forward and two back: nothing lost, seq and chain whole, verdicts unchanged, recorded_at the server's", async () => {
    const acknowledged: string[] = [];
    let stop = false;
    let n = 0;
    const writer = async (k: number) => {
      while (!stop) {
        const ids = [`clk-${k}-${n++}`, `clk-${k}-${n++}`];
        const r = await post(tokens.ingest, { records: ids.map((id) => divergentRecord(id, "clock")) });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        acknowledged.push(...ids);
      }
    };
    const writers = Array.from({ length: 8 }, (_, k) => writer(k));
    const marks: { offset: number; from: number }[] = [];
    for (let run = 0; run < RUNS; run++) {
      for (const offset of [0, HOUR, -HOUR, 0]) {
        await jump(offset);
        marks.push({ offset, from: acknowledged.length });
        await new Promise((r) => setTimeout(r, 700));
      }
    }
    stop = true;
    await Promise.all(writers);
    expect(acknowledged.length).toBeGreaterThan(100);

    const db = new Database(file, { readonly: true });
    try {
      const ops = new Map((db.prepare("SELECT operation_id, outcome FROM operation_views").all() as { operation_id: string; outcome: string }[]).map((r) => [r.operation_id, r.outcome]));
      for (const id of acknowledged) expect(ops.get(id), `${id} was acknowledged`).toBe("divergent");
      const { n: count, lo, hi } = db.prepare("SELECT COUNT(*) AS n, MIN(seq) AS lo, MAX(seq) AS hi FROM chain_records").get() as { n: number; lo: number; hi: number };
      expect([count, lo]).toEqual([hi, 1]);
      // The layer was in effect: records written while the clock was an hour ahead say so, and ones an hour back too.
      const at = (id: string) => Date.parse((db.prepare("SELECT recorded_at FROM chain_records WHERE operation_id = ? ORDER BY seq LIMIT 1").get(id) as { recorded_at: string }).recorded_at);
      const ahead = acknowledged[marks[1].from + 2];
      const behind = acknowledged[marks[2].from + 2];
      expect(at(ahead) - Date.now()).toBeGreaterThan(HOUR - 60_000);
      expect(Date.now() - at(behind)).toBeGreaterThan(HOUR - 60_000);
    } finally {
      db.close();
    }
    const verified = await cli(["audit:verify"]);
    expect(verified.status, verified.stderr).toBe(0);
    console.log(`| clock jumps (+1 h, -1 h) | ${RUNS} | ${acknowledged.length} | 0 | none refused | seq gapless, chain verified, verdicts unchanged |`);
  }, Math.max(900_000, RUNS * 60_000));

  it("the clock-skew rule holds observed_at to the server's time, whichever way it jumped", async () => {
    const read = (id: string, observedAt: number) => ({ operation_id: id, tool: { name: "social.publish" }, intent: { params: {} }, receipt: { status: "accepted", receipt_id: `r-${id}`, observed_at: new Date(observedAt).toISOString() } });
    await jump(-HOUR);
    const refused = await post(tokens.ingest, read(`skew-back-${Date.now()}`, Date.now()));
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain("observed_in_future");
    await jump(HOUR);
    const taken = await post(tokens.ingest, read(`skew-ahead-${Date.now()}`, Date.now() + HOUR / 2));
    expect(taken.status, JSON.stringify(taken.body)).toBe(201);
    await jump(0);
    expect((await post(tokens.ingest, read(`skew-now-${Date.now()}`, Date.now() + HOUR / 2))).status).toBe(422);
  });
});
