/**
 * Which b-tree each page SQLite writes belongs to (bench:growth --attribute): reads the frame
 * headers the WAL gains after each commit, counts page numbers, and at the end names each page's
 * b-tree with the dbstat virtual table. A frame is one page written, so the counts are the
 * database's own write volume, by index.
 */
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import Database from "better-sqlite3";

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

export class WalTap {
  private salt = "";
  private seen = 0;
  private readonly counts = new Map<number, number>();
  frames = 0;

  constructor(private readonly dbFile: string) {}

  private get wal() {
    return `${this.dbFile}-wal`;
  }

  /** Counts the frames committed since the last call (call it after every commit). */
  poll(): void {
    if (!existsSync(this.wal)) return;
    const fd = openSync(this.wal, "r");
    try {
      const head = Buffer.alloc(WAL_HEADER);
      if (readSync(fd, head, 0, WAL_HEADER, 0) < WAL_HEADER) return;
      // The header stores a 65,536-byte page size as 1.
      const pageSize = head.readUInt32BE(8) === 1 ? 65536 : head.readUInt32BE(8);
      const salt = head.subarray(16, 24).toString("hex");
      // A new generation (the WAL restarted after a checkpoint) starts again from its first frame.
      if (salt !== this.salt) {
        this.salt = salt;
        this.seen = 0;
      }
      const frame = Buffer.alloc(FRAME_HEADER);
      for (;;) {
        const at = WAL_HEADER + this.seen * (FRAME_HEADER + pageSize);
        if (readSync(fd, frame, 0, FRAME_HEADER, at) < FRAME_HEADER) break;
        // Frames left over from an earlier generation carry its salt: the end of this one.
        if (frame.subarray(8, 16).toString("hex") !== salt) break;
        const page = frame.readUInt32BE(0);
        this.counts.set(page, (this.counts.get(page) ?? 0) + 1);
        this.seen++;
        this.frames++;
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Frames per b-tree (dbstat reads every page of the file: slow on a large database). */
  byTree(): Map<string, number> {
    const db = new Database(this.dbFile, { readonly: true });
    try {
      const owner = new Map<number, string>();
      const wanted = new Set(this.counts.keys());
      for (const row of db.prepare("SELECT name, pageno FROM dbstat").iterate() as Iterable<{ name: string; pageno: number }>) {
        if (wanted.has(row.pageno)) owner.set(row.pageno, row.name);
      }
      const out = new Map<string, number>();
      for (const [page, n] of this.counts) {
        const name = owner.get(page) ?? "(free list, header)";
        out.set(name, (out.get(name) ?? 0) + n);
      }
      return new Map([...out].sort((a, b) => b[1] - a[1]));
    } finally {
      db.close();
    }
  }

  reset(): void {
    this.counts.clear();
    this.frames = 0;
  }
}
