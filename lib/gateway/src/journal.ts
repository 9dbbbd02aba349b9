/**
 * The gateway's journal: every record it hands the client is first appended to a local file, so
 * that what an upstream acknowledged survives the gateway being killed before Reconcile stored it.
 * Each process writes its own file (`journal-{pid}.ndjson`); a starting gateway adopts the files
 * of processes that are gone and sends their records again (the server treats a record it holds
 * as a duplicate). Once everything sent has been delivered and nothing was appended meanwhile,
 * the process's own file is emptied.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { OperationRecord } from "@reconcile/client";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readRecords(file: string): OperationRecord[] {
  const out: OperationRecord[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as OperationRecord);
    } catch {
      // the write the process was killed in: its call never got an answer either
    }
  }
  return out;
}

export class Journal {
  private appended = 0;
  readonly file: string | null;

  constructor(readonly dir: string | null) {
    this.file = dir ? path.join(dir, `journal-${process.pid}.ndjson`) : null;
    if (dir) mkdirSync(dir, { recursive: true });
  }

  /**
   * The records that gateways no longer running left undelivered, moved into this process's own
   * journal first (so a crash while resending loses nothing either). A file another live process
   * owns is left alone.
   */
  adopt(): OperationRecord[] {
    if (!this.dir || !this.file) return [];
    const out: OperationRecord[] = [];
    for (const name of readdirSync(this.dir)) {
      const m = /^journal-(\d+)\.ndjson$/.exec(name);
      if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
      const claimed = path.join(this.dir, `${name}.adopted-by-${process.pid}`);
      try {
        renameSync(path.join(this.dir, name), claimed); // one adopter wins
      } catch {
        continue;
      }
      const records = readRecords(claimed);
      for (const r of records) this.append(r);
      rmSync(claimed, { force: true });
      out.push(...records);
    }
    return out;
  }

  /** Before the record is queued: written through to the operating system (SIGKILL loses nothing after this). */
  append(record: OperationRecord): void {
    this.appended++;
    if (this.file) appendFileSync(this.file, JSON.stringify(record) + "\n");
  }

  /** A mark to pass to `compact` after a flush. */
  mark(): number {
    return this.appended;
  }

  /** Empties the journal if nothing was appended since `mark` (everything in it is delivered). */
  compact(mark: number): boolean {
    if (!this.file || mark !== this.appended) return false;
    writeFileSync(this.file, "");
    return true;
  }

  /** A clean stop with everything delivered: the file goes. */
  remove(): void {
    if (this.file) rmSync(this.file, { force: true });
  }
}
