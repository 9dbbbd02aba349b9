import Database from "better-sqlite3";

/**
 * Puts a SQLite file in WAL mode, which the file then keeps: readers never block the writer,
 * and several processes (instances, the command line) share it.
 *
 * Two processes switching the same file at once can meet in a way SQLite resolves by refusing
 * one at once with SQLITE_BUSY, without waiting out the busy timeout (it would deadlock
 * otherwise). Two servers starting together on a freshly deployed file did that about once in a
 * hundred starts, and one of them exited ("database is locked", issue 17's CI at stop 28). The one
 * refused tries again after a pause: by then the other has switched the file, and switching a
 * file already in WAL mode is a no-op that takes no write lock.
 *
 * The deploy (lib/cli/schema-engine.ts) switches a file it migrates, so servers normally find it
 * switched; the server switches it too (db.ts), for files made some other way.
 */
export async function ensureWal(file: string, opts: { busyTimeoutMs?: number; attempts?: number; pauseMs?: number } = {}): Promise<void> {
  const { busyTimeoutMs = 10_000, attempts = 50, pauseMs = 50 } = opts;
  const db = new Database(file, { timeout: busyTimeoutMs });
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const mode = db.pragma("journal_mode = WAL", { simple: true });
        if (mode !== "wal") throw new Error(`SQLite would not put ${file} in WAL mode (it stays in ${String(mode)} mode)`);
        return;
      } catch (e) {
        if ((e as { code?: string }).code !== "SQLITE_BUSY" || attempt >= attempts) throw e;
        await new Promise((r) => setTimeout(r, pauseMs * (0.5 + Math.random())));
      }
    }
  } finally {
    db.close();
  }
}
