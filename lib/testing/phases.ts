/**
 * Where a test run's time goes besides the tests' own checks: each setup phase a harness runs
 * (a server's start until /api/health answers, a database migrated or cloned from the run's
 * template, a database created, a command-line run, the command line bundled for the run) appends one line to the file
 * RECONCILE_TEST_PHASES names, when it names one (`npm test` does, per step); `npm test`'s
 * summary adds them up per step. Without it nothing is written.
 */
import { appendFileSync } from "node:fs";

export type Phase = "server start" | "migrations deployed" | "database cloned from the template" | "database created" | "command-line run" | "command line bundled";

export function recordPhase(phase: Phase, ms: number): void {
  const file = process.env.RECONCILE_TEST_PHASES;
  if (!file) return;
  try {
    appendFileSync(file, `${JSON.stringify({ phase, ms: Math.round(ms) })}\n`);
  } catch {
    // a measurement, never a reason to fail a test
  }
}

/** Runs `fn`, recording how long it took as `phase` (also when it throws). */
export async function timed<T>(phase: Phase, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    recordPhase(phase, performance.now() - t0);
  }
}

/** The lines of a phases file, added up per phase: count and seconds, most time first. */
export function sumPhases(text: string): { phase: string; count: number; seconds: number }[] {
  const by = new Map<string, { count: number; ms: number }>();
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let row: { phase?: unknown; ms?: unknown };
    try {
      row = JSON.parse(line);
    } catch {
      continue; // a line cut by a killed process
    }
    if (typeof row.phase !== "string" || typeof row.ms !== "number") continue;
    const s = by.get(row.phase) ?? { count: 0, ms: 0 };
    s.count++;
    s.ms += row.ms;
    by.set(row.phase, s);
  }
  return [...by].map(([phase, s]) => ({ phase, count: s.count, seconds: s.ms / 1000 })).sort((a, b) => b.seconds - a.seconds);
}
