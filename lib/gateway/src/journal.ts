/**
 * The gateway's journal: every record it hands the client is first appended to a local file, so
 * that what an upstream acknowledged survives the gateway being killed before Reconcile stored it.
 * Each process writes its own segments (`journal-{pid}-{n}.ndjson`). A compaction seals the
 * current segment and starts the next; a sealed segment is deleted once everything queued before
 * it was sealed has been delivered or refused for good, and nothing was dropped meanwhile. A
 * starting gateway adopts the segments of processes that are gone and sends their records again
 * (the server treats a record it holds as a duplicate). An intent whose call was never sent (its
 * strict recording failed) is withdrawn: a tombstone line keeps it from being sent on adoption.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
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

type Line = OperationRecord | { withdrawn: string };

function readLines(file: string): Line[] {
  const out: Line[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as Line);
    } catch {
      // the write the process was killed in: its call never got an answer either
    }
  }
  return out;
}

const SEGMENT = /^journal-(\d+)(?:-(\d+))?\.ndjson$/;

export class Journal {
  private segment = 0;
  private appended = 0;
  /** Sealed segments not yet known to be delivered. */
  private sealed: string[] = [];

  constructor(readonly dir: string | null) {
    if (dir) mkdirSync(dir, { recursive: true });
  }

  /** The segment being written now (null: memory only). */
  get file(): string | null {
    return this.dir ? path.join(this.dir, `journal-${process.pid}-${this.segment}.ndjson`) : null;
  }

  /**
   * The records that gateways no longer running left undelivered (withdrawn intents left out),
   * moved into this process's own journal first, so a crash while resending loses nothing either.
   * Segments of a live process are left alone.
   */
  adopt(): OperationRecord[] {
    if (!this.dir) return [];
    const byPid = new Map<number, string[]>();
    for (const name of readdirSync(this.dir)) {
      const m = SEGMENT.exec(name);
      if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
      byPid.set(Number(m[1]), [...(byPid.get(Number(m[1])) ?? []), name]);
    }
    const out: OperationRecord[] = [];
    for (const names of byPid.values()) {
      const lines: Line[] = [];
      for (const name of names.sort((a, b) => Number(SEGMENT.exec(a)![2] ?? 0) - Number(SEGMENT.exec(b)![2] ?? 0))) {
        const claimed = path.join(this.dir, `${name}.adopted-by-${process.pid}`);
        try {
          renameSync(path.join(this.dir, name), claimed); // one adopter wins
        } catch {
          continue;
        }
        lines.push(...readLines(claimed));
        rmSync(claimed, { force: true });
      }
      const withdrawn = new Set(lines.flatMap((l) => ("withdrawn" in l ? [l.withdrawn] : [])));
      for (const l of lines) {
        if ("withdrawn" in l || withdrawn.has(l.operation_id)) continue;
        this.append(l);
        out.push(l);
      }
    }
    return out;
  }

  /** Before the record is queued: written through to the operating system (SIGKILL loses nothing after this). */
  append(record: OperationRecord): void {
    this.appended++;
    if (this.dir) appendFileSync(this.file!, JSON.stringify(record) + "\n");
  }

  /** The call of this operation was not sent and its intent was not stored: never send it later. */
  withdraw(operationId: string): void {
    if (this.dir) appendFileSync(this.file!, JSON.stringify({ withdrawn: operationId }) + "\n");
  }

  /** Seals the current segment (if anything was written to it) and starts the next. */
  seal(): void {
    if (!this.dir || this.appended === 0) return;
    this.sealed.push(this.file!);
    this.segment++;
    this.appended = 0;
  }

  /** Everything queued before the last seal was delivered (or refused for good), nothing dropped: those segments go. */
  delivered(): void {
    for (const file of this.sealed) rmSync(file, { force: true });
    this.sealed = [];
  }
}
