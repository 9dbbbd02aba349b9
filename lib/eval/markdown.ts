import type { Metrics } from "@/lib/domain/metrics";
import type { OpLog } from "./arms";
import type { ArmCReport, ArmDReport } from "./run";
import { armDMarkdown } from "./markdown-d";
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
  armC?: ArmCReport;
  armD?: ArmDReport;
}): string {
  const c = r.armC;
  const d = r.armD;
  const json = {
    seed: r.seed,
    tasks: r.tasks,
    calls: { A: r.logA.length, B: r.logB.length, ...(c ? { C: c.log.length } : {}), ...(d ? { D: d.log.length } : {}) },
    arm_a: r.armA,
    arm_b: r.armB,
    ...(c ? { arm_c: c.metrics, arm_c_duplicates: { held_back: c.heldBack.length, prevented: c.prevented, applied_twice: c.duplicates } } : {}),
    ...(d ? { arm_d: d.metrics, arm_d_duplicates: { held_back: d.heldBack.length, prevented: d.prevented, applied_twice: d.duplicates }, arm_d_reads: d.reads, arm_d_resolved_on_duty: { not_applied: d.onDuty.filter((o) => o.outcome === "not_applied").length, verified: d.onDuty.filter((o) => o.outcome === "verified").length } } : {}),
    check: { passed: r.mismatches.length === 0, mismatches: r.mismatches, ...(c ? { arm_c_passed: c.mismatches.length === 0, arm_c_mismatches: c.mismatches } : {}), ...(d ? { arm_d_passed: d.mismatches.length === 0, arm_d_mismatches: d.mismatches } : {}) },
  };
  return `# Evaluation: Protocol 2, run

Written by \`npm run eval -- --seed ${r.seed} --tasks ${r.tasks}${r.trials ? ` --trials ${r.trials}` : ""}\` (lib/eval/); rerun it to reproduce
these figures exactly: the experiment is a function of its seed. The paper (000 §VII) proposes
Metrics 1–5 and Protocol 2 and runs neither; this is that experiment, with definitions as in
\`docs/DOMAIN.md\` "The paper's metrics" (lib/domain/metrics.ts).

## Result

${r.tasks} tasks, ${r.steps} steps; arm A made ${r.logA.length} tool calls, arm B ${r.logB.length}${c ? `, arm C ${c.log.length}` : ""}${d ? `, arm D ${d.log.length}` : ""} (retries included${c ? `; arm C's agent sent ${c.calls}, of which the gateway held ${c.heldBack.length} back` : ""}${d ? `; arm D's ${d.calls}, ${d.heldBack.length} held back` : ""}).

${renderMarkdown(r.rows)}

Intervals are 95 % Wilson score intervals; n is each metric's denominator. **Check:**
${
  r.mismatches.length
    ? `**FAILED**: Reconcile's metrics for arm B differ from the ground truth: ${r.mismatches.map((m) => `${m.metric}.${m.field} ${m.product} ≠ ${m.truth}`).join("; ")}.`
    : `passed — the metrics Reconcile computed from arm B's records over HTTP (\`GET /api/v1/metrics?agent=${r.agent}\`) equal the ground truth computed from the environment (hit, n, unknown and audit-sample counts of all five metrics).`
}

Where the difference comes from, by task kind:

${renderMarkdown(byKind(r.logA, r.logB, c?.log))}
${c ? armCMarkdown(c, r.armA, r.armB, r.logA, !!d) : ""}${c && d ? armDMarkdown(d, { A: r.armA, B: r.armB, C: c.metrics }, { A: r.logA, B: r.logB, C: c.log }, c.prevented) : ""}${r.passK}
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
- **Arm C** (lib/eval/arm-c.ts, issue 37 part 3) is arm A's agent with no code of its own for
  recording or gating, talking MCP (the official SDK's \`Client\`) to the real gateway
  (lib/gateway, started by the run with the configuration below), which records every call to
  the same Reconcile server under a token of its own (a viewer with \`ingest\` and \`read\`) and
  forwards it to the world's tools served as a real MCP server (lib/eval/world-mcp.ts: the SDK's
  \`Server\` over Streamable HTTP on 127.0.0.1, in the evaluator's process, so the ground truth
  stays readable). The n-th call of a step that reaches the tools meets the fault arms A and B
  meet at attempt n. A tool's answer is a result whose \`structuredContent\` is the receipt; an
  honest refusal is a result with \`isError: true\`; a false failure (applied, but the wrapper
  failed) is the wrapper's crash after the write, a JSON-RPC error, whose effect the caller
  cannot know. **The agent's policy** is arm A's, read off MCP: a result without \`isError\` is
  believed (a replay, "already done (verified …)", is such a result), one with \`isError\` is a
  failure and the same call is sent again with the same request id, at most ${3} times, then the
  task is given up; the agent does not read the text (a refusal's "a reviewer must reconcile…" is
  a failure like any other). Calls go one at a time in task order, so the run is a function of
  the seed. After the run — the agent never waits for it — a reviewer resolves each of arm C's
  uncertain operations by probing the world, so that Reconcile's figures can be compared with
  the truth. No verifier is configured for arm C (arm D has them: its section says how).

  \`\`\`json
  { "reconcile": { "url": "<the eval's server>", "token_env": "RECONCILE_EVAL_GATEWAY_TOKEN" },
    "listen": { "http": { "port": 0 } }, "upstreams": { "world": { "url": "http://127.0.0.1:<port>/mcp" } },
    "tools": { "env.*": { "operation_id_from": "/request_id", "receipt_id_from": "/receipt_id" } },
    "journal_dir": null }
  \`\`\`
- **The check**: Metrics 1–5 for arm B are computed twice — from the experiment's log and the
  environment's ground truth, and by Reconcile from its own records (the API) — and must agree
  in every count; for arm C, Reconcile's figures from the gateway's records (after the reviewer)
  must equal the log's without the agent's claims (the gateway records none, so Metric 1 is
  empty in Reconcile; the table's column C takes the agent's beliefs from the run). \`npm run
  eval\` exits non-zero when they do not.

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

/** The arm C section: duplicates prevented, the check, how close C comes to B and why. */
function armCMarkdown(c: ArmCReport, a: Metrics, b: Metrics, logA: OpLog[], withD: boolean): string {
  const refused = c.heldBack.filter((h) => h.answer === "refused").length;
  const inPlace = new Set(c.heldBack.filter((h) => h.effectInPlace).map((h) => h.operation)).size;
  const rows = [
    ["", "Arm A", "Arm B", "Arm C"],
    ["Repeats the gateway held back (refused / replayed)", "—", "—", `${c.heldBack.length} (${refused} / ${c.heldBack.length - refused})`],
    ["Steps of those repeats, the effect then wholly in place", "—", "—", String(inPlace)],
    ["**Duplicates prevented** (the held-back repeat would have applied it again)", "—", "—", `**${c.prevented}**`],
    ["Effects applied again while wholly in place (each arm's world)", String(c.duplicates.A), String(c.duplicates.B), String(c.duplicates.C)],
  ];
  const share = (m: keyof Metrics) => {
    const [x, y, z] = [a[m].value, b[m].value, c.metrics[m].value];
    return x === null || y === null || z === null || y === x ? "—" : `${(((z - x) / (y - x)) * 100).toFixed(0)} %`;
  };
  return `
## Arm C: the same agent behind the MCP gateway

${renderMarkdown(rows)}

A repeat is *held back* when the agent sent it and the tools never saw it (counted from the
world's side, lib/eval/world-mcp.ts). **Duplicates prevented** counts the effects those repeats
would have applied again had the gateway forwarded them — the calls arm A made: in each step,
held-back repeats in order, one whose attempt's fault writes the key while the step's intended
effect is wholly in place in the world is a duplicate, and the agent would have stopped at the
first that answered (lib/eval/arm-c.ts, duplicatesPrevented). The last row is the world's own
count in each arm, which that figure should equal wherever arm C reached the step. **Check:** ${
    c.mismatches.length
      ? `**FAILED**: Reconcile's metrics for arm C differ from the ground truth: ${c.mismatches.map((m) => `${m.metric}.${m.field} ${m.product} ≠ ${m.truth}`).join("; ")}.`
      : `passed — the metrics Reconcile computed from the gateway's records (\`GET /api/v1/metrics?agent=${c.agent}\`) equal the ground truth in every count, claims aside (the gateway records none).`
  }

**How close C comes to B.** Arm C achieves ${share("grounding_accuracy")} of B's gain in grounding accuracy and
${share("verification_recall")} of it in verification recall; its agent believed ${pct(undetectedSilentFailures(c.log).value)} of its accepted calls' silent failures
(A ${pct(undetectedSilentFailures(logA).value)}, B 0 %). That is the gap to expect: the gateway sees what the tool *answers*,
never the resource the tool changed. Without a verifier (Reconcile's own canonical read,
docs/API.md "Verifiers") every accepted call stays *uncertain*; the gateway passes the tool's result
through unchanged, so the agent believes a success without effect exactly as arm A does, and
builds on it. What the gateway changes is the repeat: a call whose fate is unknown (the
wrapper's error after the write) is not sent again, so its effect is not applied twice —
${c.prevented} duplicates prevented, against ${c.duplicates.A} effects arm A applied twice — at a price: the agent,
refused, gives the task up where arm A went on (pass^k below). A refusal the tool itself
reports (\`isError\`) is taken at its word: recorded rejected, its repeat forwarded.
Metric 5's n is smaller than arm A's (${c.metrics.recovery_rate.n} against ${a.recovery_rate.n}) because a false failure behind the
gateway is not a detected failure: the wrapper's error left no receipt, so it is uncertain, and
the reviewer finds its effect there. Metric 4's n counts the failed calls the reviewer settled
after the run; a rejection is not resolved (Reconcile allows no resolution of it), where arm A's
oracle counts it.

${
    withD
      ? `**No verifier was configured for arm C.** Arm D, below, is the same agent with them: there
the world answers the verifiers' reads as of each operation's step, so the run stays a function
of its seed, and the gateway answers with the verdict.`
      : `**No verifier was configured.** A verifier is an HTTP read the server schedules on wall-clock
time after each receipt; arm D (\`--arms a,b,c,d\`) is the same agent with them, the world
answering their reads as of each operation's step so that the run stays a function of its seed.`
  }

The CI test (lib/eval/eval.itest.ts) runs arm C on 20 tasks (seed 7) twice through the suite's
server: Reconcile's figures from the gateway's records equal the truth, duplicates prevented are
more than none and equal arm A's world's count, and the second run gives the same figures.
`;
}
