/** Timing the store functions the pages call: percentiles against a target, and the table. */
import { log } from "./log";

export type Row = { name: string; target: number | null; p50: number; p95: number; p99: number; max: number; rows: string; n: number; errors: number; error: string | null };

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** Wall-clock budget per query: slow aggregates get fewer samples (never under 20), not minutes each. */
export const BUDGET_MS = 60_000;
export const WARMUP_BUDGET_MS = 10_000;

/**
 * Times `fn` after a warm-up; a call that throws is counted (and its first message kept), not
 * timed. A query whose warm-up shows it cannot take `samples` calls within BUDGET_MS gets
 * BUDGET_MS worth of them (at least 20): the table's samples column says how many.
 */
export async function measure(
  name: string,
  target: number | null,
  fn: (i: number) => Promise<number>,
  samples: number,
  warmup: number,
): Promise<Row> {
  let errors = 0;
  let error: string | null = null;
  const call = async (i: number): Promise<number | null> => {
    try {
      return await fn(i);
    } catch (e) {
      errors++;
      error ??= `${(e as { code?: string }).code ?? ""} ${(e instanceof Error ? e.message : String(e)).trim().split("\n").pop()}`.trim();
      return null;
    }
  };
  const w0 = performance.now();
  let warmed = 0;
  while (warmed < warmup && (warmed === 0 || performance.now() - w0 < WARMUP_BUDGET_MS)) await call(warmed++);
  const perCall = warmed ? (performance.now() - w0) / warmed : 0;
  if (perCall * samples > BUDGET_MS) samples = Math.max(20, Math.floor(BUDGET_MS / perCall));
  warmup = warmed;
  errors = 0;
  const times: number[] = [];
  const counts: number[] = [];
  for (let i = 0; i < samples; i++) {
    const s = performance.now();
    const n = await call(warmup + i);
    const elapsed = performance.now() - s;
    if (n === null) continue;
    times.push(elapsed);
    counts.push(n);
  }
  times.sort((a, b) => a - b);
  counts.sort((a, b) => a - b);
  const rows = !counts.length ? "—" : counts[0] === counts[counts.length - 1] ? String(counts[0]) : `${counts[0]}–${counts[counts.length - 1]}`;
  const row = times.length
    ? { name, target, p50: pct(times, 50), p95: pct(times, 95), p99: pct(times, 99), max: times[times.length - 1], rows, n: times.length, errors, error }
    : { name, target, p50: NaN, p95: NaN, p99: NaN, max: NaN, rows, n: 0, errors, error };
  log(`  ${name}: p95 ${row.p95.toFixed(1)} ms${errors ? ` · ${errors} errors` : ""}`);
  return row;
}

export function printTable(rows: Row[]) {
  const w = Math.max(...rows.map((r) => r.name.length));
  const f = (x: number) => (Number.isNaN(x) ? "—" : x.toFixed(1)).padStart(8);
  console.log(`${"query".padEnd(w)}  ${"samples".padStart(7)} ${"rows".padStart(9)} ${"p50 ms".padStart(8)} ${"p95 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"max ms".padStart(8)}  target (p95)`);
  for (const r of rows) {
    const verdict = r.target === null ? "—" : r.errors ? `≤ ${r.target} ms FAILED` : `≤ ${r.target} ms ${r.p95 <= r.target ? "met" : "MISSED"}`;
    console.log(`${r.name.padEnd(w)}  ${String(r.n).padStart(7)} ${r.rows.padStart(9)} ${f(r.p50)} ${f(r.p95)} ${f(r.p99)} ${f(r.max)}  ${verdict}`);
  }
  for (const r of rows.filter((x) => x.errors)) console.log(`  ! ${r.name}: ${r.errors} of ${r.errors + r.n} calls threw: ${r.error}`);
}
