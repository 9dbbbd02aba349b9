/**
 * Backups under load (issue 38, "Backups and upgrades, tested"): the production server takes
 * ingest from eight writers while `npm run cli -- backup` copies its database (SQLite's online
 * backup API; pg_dump on PostgreSQL, from one exported snapshot); `restore` puts the copy into a
 * new database and verifies its chain. The restored database holds every record acknowledged
 * before the backup began, exactly the records up to the heads the backup reported (no gap, nothing
 * past them), and `audit:verify` passes on it. On SQLite, and on PostgreSQL when
 * INTEGRATION_DATABASE_URL names one.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { divergentRecord, prepareDatabase, startApp, type App, type Tokens } from "@/lib/reliability/harness";
import { freshDatabase, type FreshDatabase } from "@/lib/testing/own-server";
import { runCli } from "@/lib/testing/cli";

let db: FreshDatabase;
let target: FreshDatabase;
let app: App;
let tokens: Tokens;
const dir = mkdtempSync(path.join(os.tmpdir(), "reconcile-backup-"));

const cli = runCli;

beforeAll(async () => {
  db = await freshDatabase("backup");
  target = await freshDatabase("restored");
  tokens = (await prepareDatabase(db.url, "backup")).tokens;
  app = await startApp(db.url);
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await db?.drop();
  await target?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("backup and restore", () => {
  it("a backup taken under ingest load restores to a database that verifies and holds every record acknowledged before it", async () => {
    const answered: { id: string; at: number }[] = [];
    let stop = false;
    let n = 0;
    const writer = async (k: number) => {
      while (!stop) {
        const ids = [`bk-${k}-${n++}`, `bk-${k}-${n++}`];
        const res = await fetch(`${app.base}/api/v1/receipts`, {
          method: "POST",
          headers: { authorization: `Bearer ${tokens.ingest}`, "content-type": "application/json" },
          body: JSON.stringify({ records: ids.map((id) => divergentRecord(id, "backup")) }),
        });
        await res.text();
        if (res.ok) for (const id of ids) answered.push({ id, at: Date.now() });
      }
    };
    const writers = Array.from({ length: 8 }, (_, k) => writer(k));
    while (answered.length < 200) await new Promise((r) => setTimeout(r, 20));
    const out = path.join(dir, "reconcile.backup");
    const began = Date.now();
    const backup = await cli(db.url, ["backup", "--out", out]);
    const during = answered.filter((a) => a.at > began).length;
    stop = true;
    await Promise.all(writers);
    expect(backup.status, backup.stderr).toBe(0);
    // Ingest went on while the copy was taken.
    expect(during).toBeGreaterThan(0);
    const said = /backup written: .* \((\d+) bytes\), (\d+) records; head at seq (\d+)/.exec(backup.stdout);
    expect(said, backup.stdout).not.toBeNull();
    const [records, head] = [Number(said![2]), Number(said![3])];
    expect(records).toBe(head);
    // No partial file is left beside it.
    expect(readdirSync(dir)).toEqual(["reconcile.backup"]);

    const restored = await cli(target.url, ["restore", "--from", out]);
    expect(restored.status, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`restored ${out}: ${records} records; head at seq ${head}`);
    expect(restored.stdout).toContain(`chain intact: ${records} records`);
    // The instance's security trail (its users and tokens, made before the load) came back with it, whole.
    expect(restored.stdout).toMatch(/the instance's security trail intact: [1-9]\d* records/);

    const ids = new Set((await target.query<{ operation_id: string }>("SELECT operation_id FROM operations")).map((r) => r.operation_id));
    for (const a of answered.filter((x) => x.at < began)) expect(ids.has(a.id), `${a.id} was acknowledged before the backup began`).toBe(true);
    const [range] = await target.query<{ n: number | string; lo: number | string; hi: number | string }>("SELECT COUNT(*) AS n, MIN(seq) AS lo, MAX(seq) AS hi FROM chain_records");
    expect([Number(range.n), Number(range.lo), Number(range.hi)]).toEqual([records, 1, head]);
    // The live database went on past the backup.
    const [live] = await db.query<{ n: number | string }>("SELECT COUNT(*) AS n FROM chain_records");
    expect(Number(live.n)).toBeGreaterThan(records);

    const verified = await cli(target.url, ["audit:verify"]);
    expect(verified.status, verified.stderr).toBe(0);
    expect(verified.stdout).toContain(`chain intact: ${records} records`);
  });

  it("never writes over a file, nor restores over a database that holds records", async () => {
    const out = path.join(dir, "reconcile.backup");
    const again = await cli(db.url, ["backup", "--out", out]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain("exists: a backup is never written over a file");
    const over = await cli(db.url, ["restore", "--from", out]);
    expect(over.status).toBe(1);
    expect(over.stderr).toContain("already holds records");
    // A database with people but no operation yet is not empty either: its users and its
    // security trail would be lost.
    const peopleOnly = await freshDatabase("people_only");
    try {
      expect((await cli(peopleOnly.url, ["db:deploy"])).status).toBe(0);
      expect((await cli(peopleOnly.url, ["users:add", "--email", "first@backup.example", "--password", "a-long-password", "--role", "admin"])).status).toBe(0);
      const refused = await cli(peopleOnly.url, ["restore", "--from", out]);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain("already holds records or users");
    } finally {
      await peopleOnly.drop();
    }
    const missing = await cli(db.url, ["backup"]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("--out is required");
  });
});
