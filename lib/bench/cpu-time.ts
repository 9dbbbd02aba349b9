import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/**
 * Where a benchmark phase's CPU went, from Linux's /proc (bench:ingest prints it): the server's
 * process, PostgreSQL's processes when they run on this machine, the load generator (this
 * process) and the rest of the machine. Divided by the receipts of the phase, it is the CPU a
 * receipt costs, and so the most this machine could do at that cost with every core busy. Where
 * /proc is missing, `sample` returns null and nothing is printed.
 */

/** CPU times in clock ticks. */
export type ProcTimes = { utime: number; stime: number; cutime: number; cstime: number };

/** Fields 14–17 of /proc/<pid>/stat. The command name (field 2) may hold spaces and parentheses: fields are counted after its last `)`. */
export function parseProcStat(text: string): ProcTimes {
  const rest = text.slice(text.lastIndexOf(")") + 2).trim().split(/\s+/);
  // rest[0] is field 3 (state), so field n is rest[n - 3].
  const field = (n: number) => {
    const v = Number(rest[n - 3]);
    if (!Number.isFinite(v)) throw new Error(`not a /proc/<pid>/stat line: ${text.slice(0, 80)}`);
    return v;
  };
  return { utime: field(14), stime: field(15), cutime: field(16), cstime: field(17) };
}

/** The first line of /proc/stat: ticks busy and in all, over every core (idle and iowait are not busy). */
export function parseMachineStat(text: string): { busy: number; total: number } {
  const line = text.split("\n").find((l) => l.startsWith("cpu "));
  if (!line) throw new Error("/proc/stat has no cpu line");
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (ticks.length < 4 || ticks.some((t) => !Number.isFinite(t))) throw new Error(`not a /proc/stat cpu line: ${line}`);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = ticks[3] + (ticks[4] ?? 0);
  return { busy: total - idle, total };
}

export type CpuSample = { server: number; postgres: number | null; generator: number; machineBusy: number; machineTotal: number };

/** CPU so far, in microseconds: of `serverPid`, of every process named `postgres` (with the children they have reaped), of this process, of the machine. */
export function sample(serverPid: number): CpuSample | null {
  let tick: number;
  try {
    tick = 1e6 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim() || 100);
    const own = parseProcStat(readFileSync(`/proc/${serverPid}/stat`, "utf8"));
    let postgres = 0;
    let seen = false;
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "postgres") continue;
        const t = parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
        postgres += t.utime + t.stime + t.cutime + t.cstime;
        seen = true;
      } catch {
        // a process that ended while being read
      }
    }
    const machine = parseMachineStat(readFileSync("/proc/stat", "utf8"));
    const mine = process.cpuUsage();
    return {
      server: (own.utime + own.stime) * tick,
      postgres: seen ? postgres * tick : null,
      generator: mine.user + mine.system,
      machineBusy: machine.busy * tick,
      machineTotal: machine.total * tick,
    };
  } catch {
    return null;
  }
}

export type CpuBudget = {
  /** Microseconds of CPU per receipt. */
  server: number;
  postgres: number | null;
  generator: number;
  rest: number;
  /** Share of every core's time that was busy. */
  busy: number;
  /** Receipts/s with every core busy at this cost per receipt. */
  bound: number;
};

/** The CPU of a phase that stored `receipts`, per receipt, and what `cores` would allow at that cost. */
export function cpuBudget(before: CpuSample, after: CpuSample, receipts: number, cores: number): CpuBudget {
  if (receipts <= 0) throw new Error("a phase without receipts has no cost per receipt");
  const per = (a: number, b: number) => (b - a) / receipts;
  const server = per(before.server, after.server);
  const postgres = before.postgres === null || after.postgres === null ? null : per(before.postgres, after.postgres);
  const generator = per(before.generator, after.generator);
  const machine = per(before.machineBusy, after.machineBusy);
  const rest = Math.max(0, machine - server - (postgres ?? 0) - generator);
  const elapsed = after.machineTotal - before.machineTotal;
  return {
    server,
    postgres,
    generator,
    rest,
    busy: elapsed > 0 ? (after.machineBusy - before.machineBusy) / elapsed : 0,
    bound: machine > 0 ? (cores * 1e6) / machine : Infinity,
  };
}

/** One line: `CPU per receipt: server 254 µs · PostgreSQL 180 µs · …`. */
export function describeBudget(b: CpuBudget, cores: number): string {
  const us = (v: number) => `${v.toFixed(0)} µs`;
  const parts = [`server ${us(b.server)}`, ...(b.postgres === null ? [] : [`PostgreSQL ${us(b.postgres)}`]), `load generator ${us(b.generator)}`, `rest ${us(b.rest)}`];
  return `CPU per receipt: ${parts.join(" · ")}; ${(b.busy * 100).toFixed(0)} % of ${cores} cores busy; every core busy at this cost: ≤ ${b.bound.toFixed(0)} receipts/s`;
}
