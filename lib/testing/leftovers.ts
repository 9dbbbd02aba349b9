/**
 * Processes a test run left running (issue 35): every process whose working directory is this
 * checkout, other than the ones that were there before the run and this process's own line of
 * parents. Read from /proc (Linux); elsewhere nothing is found.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

export type Proc = { pid: number; args: string };

function processesIn(dir: string): Proc[] {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  } catch {
    return [];
  }
  const out: Proc[] = [];
  for (const p of pids) {
    try {
      if (readlinkSync(`/proc/${p}/cwd`) !== dir) continue;
      out.push({ pid: Number(p), args: readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").join(" ").trim() });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

function ancestors(): Set<number> {
  const out = new Set<number>();
  let pid = process.pid;
  while (pid > 1 && !out.has(pid)) {
    out.add(pid);
    try {
      pid = Number(/^\d+ \(.*\) \S (\d+)/s.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1] ?? 0);
    } catch {
      break;
    }
  }
  return out;
}

/** The processes running in `dir` now (call before the run). */
export function snapshot(dir = process.cwd()): Set<number> {
  return new Set(processesIn(dir).map((p) => p.pid));
}

/** What is still running in `dir` that was not there before, after giving it `graceMs` to exit. */
export async function leftovers(before: Set<number>, dir = process.cwd(), graceMs = 10_000): Promise<Proc[]> {
  const mine = ancestors();
  const end = Date.now() + graceMs;
  for (;;) {
    const left = processesIn(dir).filter((p) => !before.has(p.pid) && !mine.has(p.pid) && p.args !== "");
    if (!left.length || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 500));
  }
}
