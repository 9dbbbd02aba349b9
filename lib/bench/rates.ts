/**
 * Receipts a second over the second half of a run's requests: from the answer that ended the
 * first half to the last answer. `done`: when each answer came (ms, any order); `per`: receipts a
 * request. bench:ingest prints it beside the whole run's rate: a server just started, on empty
 * tables, is slower for its first several thousand records (docs/BENCHMARKS.md, session 18).
 * NaN when there are fewer than two answers or they all came at once.
 */
export function secondHalfRate(done: number[], per: number): number {
  const sorted = [...done].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  if (half < 1) return NaN;
  const seconds = (sorted[sorted.length - 1] - sorted[half - 1]) / 1000;
  return seconds > 0 ? ((sorted.length - half) * per) / seconds : NaN;
}
