import { computeMetrics, isRecovered, METRIC_NAMES, METRIC_TITLES, metricFrom, type Metric, type MetricFacts, type Metrics, type RecoveryCandidate } from "@/lib/domain/metrics";
import type { OpLog } from "./arms";
import { FAULT_RATES, TASK_KINDS, type TaskKind } from "./tasks";

/** Each logged operation's metric facts, from the log and the environment's ground truth. */
export function factsOfLog(log: OpLog[], arm: "A" | "B"): Map<string, MetricFacts> {
  const effective = (l: OpLog) =>
    arm === "A" ? (l.actual === "held" ? "verified" : "not_held") : l.review === "verified" ? "verified" : l.review === "not_applied" ? "not_applied" : l.verdict;
  const cand = (l: OpLog): RecoveryCandidate => ({ operation_id: l.id, created_seq: l.order, trajectory_id: l.trajectory, tool: l.tool, fingerprint: l.fingerprint, effective_outcome: effective(l), recovers: l.recovers });
  const byTrajectory = new Map<string, RecoveryCandidate[]>();
  for (const l of log) {
    const list = byTrajectory.get(l.trajectory);
    if (list) list.push(cand(l));
    else byTrajectory.set(l.trajectory, [cand(l)]);
  }
  return new Map(
    log.map((l) => [
      l.id,
      {
        claim: l.claim,
        actual: l.actual,
        accepted: l.accepted,
        verdict: l.verdict,
        review: l.review,
        recovered: isRecovered({ ...cand(l), verdict: l.verdict, review: l.review }, byTrajectory.get(l.trajectory)!),
        sampled: l.sampled,
      },
    ]),
  );
}

/** Metrics 1–5 of one arm from its log and the environment's ground truth. */
export function metricsOfLog(log: OpLog[], arm: "A" | "B"): Metrics {
  return computeMetrics([...factsOfLog(log, arm).values()].map((facts) => ({ facts, count: 1 })));
}

const pct = (v: number | null) => (v === null ? "—" : `${(v * 100).toFixed(1)} %`);
const ci = (m: Metric) => (m.interval ? `[${pct(m.interval.low)}, ${pct(m.interval.high)}]` : "");
const delta = (a: Metric, b: Metric) => (a.value === null || b.value === null ? "—" : `${b.value - a.value >= 0 ? "+" : ""}${((b.value - a.value) * 100).toFixed(1)} pts`);

/**
 * Beside Metric 2 (a property of the tools, which both arms share): accepted receipts whose
 * effect did not hold *and that the agent believed* (claimed success) — the silent failures that
 * stayed silent, the paper's concern.
 */
export function undetectedSilentFailures(log: OpLog[]): Metric {
  const known = log.filter((l) => l.accepted);
  const hit = known.filter((l) => l.actual === "not_held" && l.claim === "success").length;
  return metricFrom("silent_failure_rate", hit, known.length, 0, 0);
}

/**
 * How much of B's gain over A arm C achieves: (C − A) / (B − A), as a share; "—" when B and A
 * agree or a value is missing. Shown for the rows where B's change is the gain verification brings
 * (1, 2′ and 4); Metric 2 is the tools' and Metric 5's denominators differ by arm (EVALUATION.md).
 */
export function shareOfGain(a: Metric, b: Metric, c: Metric): string {
  if (a.value === null || b.value === null || c.value === null || Math.abs(b.value - a.value) < 1e-9) return "—";
  return `${(((c.value - a.value) / (b.value - a.value)) * 100).toFixed(0)} %`;
}

/** The paper-style table: Metrics 1–5 for arms A and B (and C, the gateway, when given), the deltas, n and 95 % intervals. */
export function table(a: Metrics, b: Metrics, extra?: { a: Metric; b: Metric; c?: Metric }, c?: Metrics): string[][] {
  const rows = [["Metric", "Arm A: believes the tool", "n (A)", "Arm B: with Reconcile", "n (B)", "Δ (B − A)", ...(c ? ["Arm C: behind the gateway", "n (C)", "Δ (C − A)", "C's share of B's gain"] : [])]];
  const row = (label: string, x: Metric, y: Metric, z?: Metric, gain = true) => [
    label,
    `${pct(x.value)} ${ci(x)}`.trim(),
    String(x.n),
    `${pct(y.value)} ${ci(y)}`.trim(),
    String(y.n),
    delta(x, y),
    ...(c && z ? [`${pct(z.value)} ${ci(z)}`.trim(), String(z.n), delta(x, z), gain ? shareOfGain(x, y, z) : "—"] : []),
  ];
  for (const name of METRIC_NAMES) {
    const t = METRIC_TITLES[name];
    rows.push(row(`${t.number}. ${t.title}`, a[name], b[name], c?.[name], name === "grounding_accuracy" || name === "verification_recall"));
    if (name === "silent_failure_rate" && extra) rows.push(row("2′. … of them believed by the agent", extra.a, extra.b, extra.c));
  }
  return rows;
}

export function renderText(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r, i) => r.map((cell, c) => cell.padEnd(widths[c])).join("  ") + (i === 0 ? "\n" + widths.map((w) => "-".repeat(w)).join("  ") : "")).join("\n");
}

export function renderMarkdown(rows: string[][]): string {
  return [`| ${rows[0].join(" | ")} |`, `|${rows[0].map(() => "---").join("|")}|`, ...rows.slice(1).map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

export type Comparison = { metric: string; field: string; product: number; truth: number }[];

/** Where the product's figures (GET /api/v1/metrics) differ from the environment's ground truth. */
export function compare(product: Metrics, truth: Metrics): Comparison {
  const out: Comparison = [];
  for (const name of METRIC_NAMES) {
    for (const field of ["hit", "n", "unknown", "from_samples"] as const) {
      if (product[name][field] !== truth[name][field]) out.push({ metric: name, field, product: product[name][field], truth: truth[name][field] });
    }
  }
  return out;
}

/** Per task kind: silent failure rate and grounding accuracy of each arm (where the delta comes from); arm C's log is read as arm B's (review-based). */
export function byKind(logA: OpLog[], logB: OpLog[], logC?: OpLog[]): string[][] {
  const withC = logC !== undefined;
  const rows = [["Task kind", `calls (A / B${withC ? " / C" : ""})`, "Silent failures A", "Silent failures B", ...(withC ? ["Silent failures C"] : []), "Grounding A", "Grounding B", ...(withC ? ["Grounding C"] : [])]];
  for (const kind of TASK_KINDS) {
    const of = (log: OpLog[]) => log.filter((l) => l.kind === kind);
    const a = metricsOfLog(of(logA), "A");
    const b = metricsOfLog(of(logB), "B");
    const c = withC ? metricsOfLog(of(logC), "B") : null;
    rows.push([
      kind,
      [logA, logB, ...(withC ? [logC] : [])].map((l) => of(l).length).join(" / "),
      pct(a.silent_failure_rate.value),
      pct(b.silent_failure_rate.value),
      ...(c ? [pct(c.silent_failure_rate.value)] : []),
      pct(a.grounding_accuracy.value),
      pct(b.grounding_accuracy.value),
      ...(c ? [pct(c.grounding_accuracy.value)] : []),
    ]);
  }
  return rows;
}

export function faultRatesTable(): string[][] {
  const faults = Object.keys(FAULT_RATES.simple);
  return [["Task kind", ...faults], ...TASK_KINDS.map((k: TaskKind) => [k, ...faults.map((f) => `${(FAULT_RATES[k][f as keyof (typeof FAULT_RATES)["simple"]] * 100).toFixed(0)} %`)])];
}
