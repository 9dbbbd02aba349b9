import Database from "better-sqlite3";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { deployMigrations } from "@/lib/cli/schema-engine";
import { ensureWal } from "./sqlite-wal";

/**
 * Switching a SQLite file to WAL mode while another process switches it (sqlite-wal.ts), on
 * files of its own whatever database the suite runs on. SQLite refuses the switch at once,
 * whatever the busy timeout, while another connection holds a write transaction on a file in
 * rollback mode: that is the state of a process half-way through its own switch.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function rollbackModeFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "reconcile-wal-"));
  dirs.push(dir);
  const file = join(dir, "x.db");
  const db = new Database(file);
  db.exec("CREATE TABLE t (n INTEGER)");
  db.close();
  return file;
}

/** The file header's read and write versions: 2 and 2 in WAL mode, 1 and 1 in rollback mode. */
const headerVersions = (file: string) => [...readFileSync(file).subarray(18, 20)];

describe("ensureWal", () => {
  it("waits out a switch another connection has half done, then finds the file in WAL mode", async () => {
    const file = rollbackModeFile();
    const other = new Database(file, { timeout: 0 });
    other.exec("BEGIN IMMEDIATE");
    // What a plain switch does meanwhile: refused at once, the busy timeout notwithstanding.
    const plain = new Database(file, { timeout: 5_000 });
    const started = Date.now();
    expect(() => plain.pragma("journal_mode = WAL")).toThrow(expect.objectContaining({ code: "SQLITE_BUSY" }));
    expect(Date.now() - started).toBeLessThan(1_000);
    plain.close();

    setTimeout(() => {
      other.exec("INSERT INTO t VALUES (1)");
      other.exec("COMMIT");
    }, 200);
    await ensureWal(file, { pauseMs: 20 });
    other.close();
    expect(headerVersions(file)).toEqual([2, 2]);
    const check = new Database(file);
    expect(check.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(check.prepare("SELECT n FROM t").all()).toEqual([{ n: 1 }]);
    check.close();
  });

  it("gives up with SQLite's error when the other never finishes, and leaves the file as it was", async () => {
    const file = rollbackModeFile();
    const other = new Database(file, { timeout: 0 });
    other.exec("BEGIN IMMEDIATE");
    await expect(ensureWal(file, { attempts: 3, pauseMs: 10 })).rejects.toMatchObject({ code: "SQLITE_BUSY" });
    other.exec("ROLLBACK");
    other.close();
    expect(headerVersions(file)).toEqual([1, 1]);
  });

  it("a file already in WAL mode is left as it is, while another connection writes", async () => {
    const file = rollbackModeFile();
    await ensureWal(file);
    const other = new Database(file, { timeout: 0 });
    other.exec("BEGIN IMMEDIATE");
    other.exec("INSERT INTO t VALUES (2)");
    await ensureWal(file, { attempts: 1 });
    other.exec("COMMIT");
    other.close();
    expect(headerVersions(file)).toEqual([2, 2]);
  });

  it("the deploy leaves a new SQLite database in WAL mode, so servers starting together find nothing to switch", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reconcile-wal-deploy-"));
    dirs.push(dir);
    const file = join(dir, "deployed.db");
    await deployMigrations(`file:${file}`);
    expect(headerVersions(file)).toEqual([2, 2]);
  });
});
