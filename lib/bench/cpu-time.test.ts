import { describe, expect, it } from "vitest";
import { cpuBudget, describeBudget, parseMachineStat, parseProcStat, sample, type CpuSample } from "./cpu-time";

describe("CPU time from /proc", () => {
  it("reads utime, stime, cutime and cstime after the command name, whatever it holds", () => {
    // A command name with spaces and a ")" in it: fields are counted after the last ")".
    const line = "4242 (node (x) y) S 1 4242 4242 0 -1 4194304 9 0 0 0 1234 567 89 10 20 0 11 0 100 0 0";
    expect(parseProcStat(line)).toEqual({ utime: 1234, stime: 567, cutime: 89, cstime: 10 });
  });

  it("refuses a line that is not a stat line", () => {
    expect(() => parseProcStat("nonsense")).toThrow(/not a \/proc/);
  });

  it("counts idle and iowait as not busy, everything else as busy", () => {
    const stat = "cpu  100 5 50 800 40 3 2 0 0 0\ncpu0 50 2 25 400 20 1 1 0 0 0\nintr 1 2 3\n";
    expect(parseMachineStat(stat)).toEqual({ busy: 160, total: 1000 });
  });

  it("divides a phase's CPU by its receipts and bounds the rate at every core busy", () => {
    const before: CpuSample = { server: 1_000_000, postgres: 500_000, generator: 200_000, machineBusy: 3_000_000, machineTotal: 10_000_000 };
    // 1,000 receipts: the server 250 ms, PostgreSQL 150 ms, the generator 50 ms, the machine 500 ms busy of 2 cores × 0.5 s.
    const after: CpuSample = { server: 1_250_000, postgres: 650_000, generator: 250_000, machineBusy: 3_500_000, machineTotal: 11_000_000 };
    const b = cpuBudget(before, after, 1000, 2);
    expect(b).toEqual({ server: 250, postgres: 150, generator: 50, rest: 50, busy: 0.5, bound: 4000 });
    expect(describeBudget(b, 2)).toBe(
      "CPU per receipt: server 250 µs · PostgreSQL 150 µs · load generator 50 µs · rest 50 µs; 50 % of 2 cores busy; every core busy at this cost: ≤ 4000 receipts/s",
    );
  });

  it("leaves PostgreSQL out where its processes are not on this machine", () => {
    const s = (x: number): CpuSample => ({ server: x, postgres: null, generator: 0, machineBusy: 2 * x, machineTotal: 4 * x });
    const b = cpuBudget(s(0), s(100_000), 100, 1);
    expect(b.postgres).toBeNull();
    expect(b.rest).toBe(1000);
    expect(describeBudget(b, 1)).not.toMatch(/PostgreSQL/);
  });

  it("samples this process on Linux", () => {
    const s = sample(process.pid);
    if (!s) throw new Error("no /proc here: the benchmark runs on Linux");
    // Work until the kernel has counted at least one tick of it (10 ms of CPU; on a busy machine
    // a fixed amount of work may fit between two ticks), at most 5 s.
    let x = 0;
    let t: CpuSample;
    const end = Date.now() + 5000;
    do {
      for (let i = 0; i < 1e6; i++) x += Math.sqrt(i);
      t = sample(process.pid)!;
    } while ((t.generator <= s.generator || t.machineTotal <= s.machineTotal) && Date.now() < end);
    expect(x).toBeGreaterThan(0);
    expect(t.server).toBeGreaterThanOrEqual(s.server);
    expect(t.generator).toBeGreaterThan(s.generator);
    expect(t.machineTotal).toBeGreaterThan(s.machineTotal);
  });
});
