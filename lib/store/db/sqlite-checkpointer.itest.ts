import Database from "better-sqlite3";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteCheckpointer } from "./sqlite-checkpointer";

/**
 * SQLite's checkpoints in a thread of their own (sqlite-checkpointer.ts): on a database file of
 * its own, whatever database the suite runs on. The crash harness covers the thread being
 * killed with the server.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function database(): { file: string; db: Database.Database } {
  const dir = mkdtempSync(join(tmpdir(), "reconcile-checkpoints-"));
  dirs.push(dir);
  const file = join(dir, "x.db");
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)");
  db.pragma("wal_checkpoint(TRUNCATE)");
  return { file, db };
}

const size = (f: string) => {
  try {
    return statSync(f).size;
  } catch {
    return 0;
  }
};

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("SQLite checkpoints in their own thread", () => {
  it("copies what the writer committed into the database file, while the writer never checkpoints", async () => {
    const { file, db } = database();
    db.pragma("wal_autocheckpoint = 0");
    const insert = db.prepare("INSERT INTO t (v) VALUES (randomblob(4000))");
    db.transaction(() => {
      for (let i = 0; i < 2_000; i++) insert.run();
    })();
    const before = size(file);
    expect(size(`${file}-wal`)).toBeGreaterThan(8_000_000); // committed, in the WAL only
    expect(before).toBeLessThan(100_000);

    const checkpointer = new SqliteCheckpointer(file, 20);
    await until("a checkpoint", () => checkpointer.checkpoints > 0);
    expect(checkpointer.last!.checkpointed).toBe(checkpointer.last!.log); // all of it
    expect(size(file)).toBeGreaterThan(8_000_000);
    await checkpointer.stop();

    // The copy is the data: read from the database file alone, without the WAL.
    db.close();
    rmSync(`${file}-wal`, { force: true });
    rmSync(`${file}-shm`, { force: true });
    const again = new Database(file, { readonly: true });
    expect(again.prepare("SELECT count(*) AS n, sum(length(v)) AS bytes FROM t").get()).toEqual({ n: 2_000, bytes: 8_000_000 });
    again.close();
  });

  it("keeps the WAL bounded under a writer that never stops: the writer's own bound restarts it", async () => {
    const { file, db } = database();
    db.pragma("wal_autocheckpoint = 500"); // the writer's bound (WRITER_CHECKPOINT_PAGES in production)
    const checkpointer = new SqliteCheckpointer(file, 5);
    const insert = db.prepare("INSERT INTO t (v) VALUES (randomblob(4000))");
    const batch = db.transaction(() => {
      for (let i = 0; i < 100; i++) insert.run();
    });
    let largest = 0;
    // 400 transactions, ~160 MB through the WAL, yielding between them so the thread runs.
    for (let i = 0; i < 400; i++) {
      batch();
      largest = Math.max(largest, size(`${file}-wal`));
      await new Promise((r) => setImmediate(r));
    }
    await until("a checkpoint", () => checkpointer.checkpoints > 0);
    await checkpointer.stop();
    // 500 pages and one transaction's ~100 over it, in 4 KiB pages and frame headers, is ~2.5 MB;
    // a writer's checkpoint that meets the thread's gives up, and on a loaded machine a few in a
    // row did (5.1 MB in one CI run). A WAL pinned by the thread (a read left open, say) would
    // have grown to the whole 160 MB.
    expect(largest).toBeLessThan(16 * 1024 * 1024);
    expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 40_000 });
    db.close();
  });

  it("stops when asked, and a checkpointer whose file cannot be opened fails alone", async () => {
    const { file, db } = database();
    const checkpointer = new SqliteCheckpointer(file, 5);
    expect(checkpointer.running).toBe(true);
    await checkpointer.stop();
    expect(checkpointer.running).toBe(false);
    await checkpointer.stop(); // twice is once
    db.close();

    const missing = new SqliteCheckpointer(join(tmpdir(), "no-such-dir-reconcile", "x.db"), 5);
    await until("the thread to fail", () => !missing.running);
    await missing.stop(); // stopping still returns
    expect(missing.checkpoints).toBe(0);
  });

  it("a command that stops it still exits with its own code", () => {
    const { file, db } = database();
    db.close();
    // What the command line does: close the database (stop the thread), then process.exit(code).
    // Awaiting an unreferenced thread's exit let the process end first, with 0.
    const script = `
      const { SqliteCheckpointer } = await import(${JSON.stringify(join(process.cwd(), "lib/store/db/sqlite-checkpointer.ts"))});
      const checkpointer = new SqliteCheckpointer(${JSON.stringify(file)}, 5);
      await new Promise((r) => setTimeout(r, 50));
      await checkpointer.stop();
      process.exit(3);
    `;
    for (let i = 0; i < 3; i++) {
      const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(3);
    }
  });
});
