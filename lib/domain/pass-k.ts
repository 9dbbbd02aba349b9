/**
 * pass^k as τ-bench defines it (Yao et al., 2024): the probability that all k independent
 * trials of the same task pass. From n ≥ k trials of a task, c of which passed, the unbiased
 * estimate is C(c, k) / C(n, k) — the share of the k-subsets of the n trials in which every
 * trial passed; over a set of tasks, the mean of the per-task estimates.
 */

function wholeNumber(name: string, v: number, min: number) {
  if (!Number.isInteger(v) || v < min) throw new RangeError(`pass^k: ${name} must be a whole number ≥ ${min}, not ${v}`);
}

/** C(c, k) / C(n, k) for one task: n trials, c of them passed. Refuses k > n. */
export function passHatK(n: number, c: number, k: number): number {
  wholeNumber("n", n, 1);
  wholeNumber("c", c, 0);
  wholeNumber("k", k, 1);
  if (c > n) throw new RangeError(`pass^k: c = ${c} passing trials exceeds n = ${n} trials`);
  if (k > n) throw new RangeError(`pass^k: k = ${k} exceeds n = ${n} trials; C(n, k) would be 0`);
  // C(c, k) / C(n, k) = Π_{i<k} (c − i) / (n − i): no factorials, exact at the ends (0 once c < k, 1 when c = n).
  let p = 1;
  for (let i = 0; i < k && p > 0; i++) p *= (c - i) / (n - i);
  return p;
}

/** The mean over tasks of C(c, k) / C(n, k), each task with n trials; null for no tasks. */
export function passHatKOverTasks(passing: readonly number[], n: number, k: number): number | null {
  if (passing.length === 0) {
    passHatK(n, 0, k); // still refuses a k the trials cannot estimate
    return null;
  }
  let sum = 0;
  for (const c of passing) sum += passHatK(n, c, k);
  return sum / passing.length;
}

/** pass^k for k = 1…n over a set of tasks. */
export function passHatKCurve(passing: readonly number[], n: number): (number | null)[] {
  return Array.from({ length: n }, (_, i) => passHatKOverTasks(passing, n, i + 1));
}
