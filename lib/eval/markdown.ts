import type { Metrics } from "@/lib/domain/metrics";
import type { OpLog } from "./arms";
import { byKind, faultRatesTable, renderMarkdown, undetectedSilentFailures, type Comparison } from "./report";

/** docs/EVALUATION.md as `npm run eval` writes it (lib/eval/run.ts computes the figures). */
const pct = (v: number | null) => (v === null ? "—" : `${(v * 100).toFixed(1)} %`);

export function evaluationMarkdown(r: {
  passK: string;
  trials?: number;
  seed: number;
  tasks: number;
  steps: number;
  logA: OpLog[];
  logB: OpLog[];
  armA: Metrics;
  armB: Metrics;
  rows: string[][];
  mismatches: Comparison;
  rate: number;
  agent: string;
}): string {
  const json = { seed: r.seed, tasks: r.tasks, calls: { A: r.logA.length, B: r.logB.length }, arm_a: r.armA, arm_b: r.armB, check: { passed: r.mismatches.length === 0, mismatches: r.mismatches } };
  return `# Evaluation: Protocol 2, run

Written by \`npm run eval -- --seed ${r.seed} --tasks ${r.tasks}${r.trials ? ` --trials ${r.trials}` : ""}\` (lib/eval/); rerun it to reproduce
these figures exactly: the experiment is a function of its seed. The paper (000 §VII) proposes
Metrics 1–5 and Protocol 2 and runs neither; this is that experiment, with definitions as in
\`shared/METRICS.md\` (lib/domain/metrics.ts).

## Result

${r.tasks} tasks, ${r.steps} steps; arm A made ${r.logA.length} tool calls, arm B ${r.logB.length} (retries included).

${renderMarkdown(r.rows)}

Intervals are 95 % Wilson score intervals; n is each metric's denominator. **Check:**
${
  r.mismatches.length
    ? `**FAILED**: Reconcile's metrics for arm B differ from the ground truth: ${r.mismatches.map((m) => `${m.metric}.${m.field} ${m.product} ≠ ${m.truth}`).join("; ")}.`
    : `passed — the metrics Reconcile computed from arm B's records over HTTP (\`GET /api/v1/metrics?agent=${r.agent}\`) equal the ground truth computed from the environment (hit, n, unknown and audit-sample counts of all five metrics).`
}

Where the difference comes from, by task kind:

${renderMarkdown(byKind(r.logA, r.logB))}
${r.passK}
## Method

- **Environment** (lib/eval/world.ts): in-process services with real state — a user store, a file
  store, a ledger, a message queue, and a search index whose writes reach readers two ticks
  late — and one cross-system tool (\`env.billing.charge_and_notify\`: ledger and queue in one
  call). Ground truth (Protocol 2, step 3) is a probe of the primary state right after each
  call: did the intended postcondition hold, in every backend it names, with the intended content?
- **Tasks** (lib/eval/tasks.ts): the paper's five kinds in turn — simple (one call), compound
  (record → file referencing it → index entry → notification; a step whose premise did not
  hold writes a dangling reference, so a silent failure compounds), adversarial (tools that
  often return success without effect), partial (tools that often half-apply), cross-system.
- **Faults** per call, by the paper's taxonomy (Table I), at these rates:

${renderMarkdown(faultRatesTable())}

  \`wrong_tool\` (category 1: the call reached another tool), \`wrong_params\` (2: other parameters
  were passed), \`partial\` (3: half applied, the receipt says \`partial\`), \`no_effect\` (4:
  success signal without effect), \`read_unavailable\` (5 for arm B: the verification step cannot
  read back; arm A has no verification step at all, category 5 by construction), \`rejected\`
  (the boundary refused, honestly), \`false_failure\` (applied, but an error reported). Both arms
  meet the same fault for the same task, step and attempt.
- **Arm A** believes what tools return: an accepted call is done, a rejected one is retried (at
  most ${3} attempts), then the task is given up. Its "verification verdict" is only the
  rejection; reviewers are replaced by the oracle, so Metric 4 counts every real failure.
- **Arm B** is the same agent with Reconcile: each call's intent, receipt and an independent
  canonical read-back (after a random wait of 0–3 ticks) go to a real Reconcile server over
  HTTP in one record, with the agent's claim (success when verified, failure when divergent or
  rejected, none when uncertain), \`recovers\` naming the attempt it retries and \`depends_on\` its
  premise. A rejection counts as not applied only on a settled read-back: the agent reads a
  rejected write after the index's lag, and again when the resource could not be read (otherwise
  a false failure could hide behind a stale or missing read, where no reviewer would look).
  Divergent and uncertain operations are escalated: a reviewer probes the environment
  and resolves them through the corrections API (\`verified\` with evidence, or \`not_applied\`);
  the agent then obeys the retry gate (it retries only when Reconcile says a new operation may
  be issued) and never builds on an unverified premise. ${(r.rate * 100).toFixed(0)} % of each tool's verified
  operations are drawn as audit samples; the reviewer confirms them from the queue.
- **The check**: Metrics 1–5 for arm B are computed twice — from the experiment's log and the
  environment's ground truth, and by Reconcile from its own records (the API) — and must agree
  in every count. \`npm run eval\` exits non-zero when they do not.

## Reading the result

- The paper expects the delta to be largest for Metric 2. **As METRICS.md defines it** (accepted
  receipts whose effect did not hold) Metric 2 is a property of the tools, which both arms share
  under the same faults, so it barely moves (${pct(r.armA.silent_failure_rate.value)} → ${pct(r.armB.silent_failure_rate.value)}). What receipt verification changes
  is whether such a failure stays *silent*: row 2′ counts the ones the agent believed (claimed
  success), ${pct(undetectedSilentFailures(r.logA).value)} of accepted calls for arm A and ${pct(undetectedSilentFailures(r.logB).value)} for arm B; Metric 1 (grounding
  accuracy) moves with it. Metric 4 moves further still, but only because arm A has no
  verification step at all: its recall is 0 by construction.
- Arm A has no verification, so its Metric 3 is undefined (n = 0) and its Metric 4 is 0: every
  real failure went unflagged. Arm B's precision is below 100 % because of the lagging search
  index (a read-back before the write propagated says absent; the reviewer finds the effect
  there) and false failures. Its recall is below 100 % when a read-back could not be made
  (category 5): the operation stays uncertain, not flagged, until a reviewer settles it.
- Metric 5: arm A only sees rejections and retries them; arm B also detects the silent ones and
  retries after the reviewer's not_applied, so it has many more detected failures (n) to recover,
  most of them in the adversarial and partial tasks, where a quarter of the calls fail and three
  attempts are sometimes not enough. And a false alarm (divergent, the reviewer finds the effect
  there) is a detected failure that needs no recovery, yet counts as not recovered under the
  definition. Its rate can therefore come out below arm A's.
- Read-backs in the run above are faithful (the canonical read sees the primary, except for
  the index's lag), so a verified operation never hides a failure and audit samples all confirm.
  With lying readers (\`--reader-faults\`, the section above when it has been run) Metric 4
  measured on the review queue alone is biased upwards, which is what audit samples, weighted by
  1/rate, correct. The agent is scripted, not an LLM.

## Raw figures (JSON)

\`\`\`json
${JSON.stringify(json, null, 2)}
\`\`\`
`;
}
