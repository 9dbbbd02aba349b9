import { isDrawn, metricPart, type MetricName, type Metrics } from "@/lib/domain/metrics";
import { INDEX_LAG, runArmA, runArmB, type Http, type OpLog } from "./arms";
import { byKind, compare, factsOfLog, faultRatesTable, metricsOfLog, renderMarkdown, renderText, table, undetectedSilentFailures, type Comparison } from "./report";
import { makeTasks } from "./tasks";
import { offlineArmB, passKMarkdown, passKTable, runTrials, type Trials } from "./trials";
import { TOOLS, World } from "./world";
import { LyingWorld } from "./readers";
import { asReconcileKnowsIt, readerFaultReport, type ReaderFaultReport } from "./reader-faults";

/**
 * Protocol 2 (000 §VII), end to end: the benchmark, both arms, the paper-style table, and the
 * check that the metrics Reconcile computes from arm B's records (GET /api/v1/metrics) equal
 * the environment's ground truth. `npm run eval` (lib/eval/main.ts) runs it against a server of
 * its own; lib/eval/eval.itest.ts against the test suite's.
 */
export type EvalOptions = {
  seed: number;
  tasks: number;
  /** A running Reconcile and a token with ingest, verify, read and review (its owner a reviewer or admin). */
  base: string;
  token: string;
  /** Sets a tool's audit sampling rate on that server's database. */
  setSampling: (tool: string, rate: number) => Promise<void>;
  samplingRate?: number;
  /** Names this run's operations and agent (default from the seed). */
  runId?: string;
  /**
   * pass^k over this many trials (issue 37): trial 0 is the run above, the others run under
   * fault seeds derived from the seed, arm B through the server (its metrics checked against the
   * ground truth in each trial) unless trialsOffline, which runs them in-process.
   */
  trials?: number;
  trialsOffline?: boolean;
  /** Where the markdown finds the plot (relative to it), when trials are run. */
  plotPath?: string;
  onTrial?: (trial: number) => void;
  /**
   * Issue 37, part 2: arm B's readers lie (lib/eval/readers.ts). Reconcile's figures are then
   * checked against what its records say, and compared with the ground truth in a section of its
   * own; `command` names the run there. Not with trials.
   */
  readerFaults?: { command: string };
};

export type EvalResult = {
  seed: number;
  tasks: number;
  agent: string;
  logA: OpLog[];
  logB: OpLog[];
  armA: Metrics;
  armB: Metrics;
  product: Metrics;
  mismatches: Comparison;
  trials?: Trials;
  /** Trials 1…n−1 through the server: where Reconcile's metrics differ from the ground truth. */
  trialMismatches: { trial: number; mismatches: Comparison }[];
  text: string;
  markdown: string;
  readerFaults?: ReaderFaultReport;
};

export async function runEval(o: EvalOptions): Promise<EvalResult> {
  const rate = o.samplingRate ?? 0.1;
  const runId = o.runId ?? `eval${o.seed}`;
  const agent = `${runId}-arm-b`;
  for (const tool of TOOLS) await o.setSampling(tool, rate);
  const http: Http = async (method, path, body) => {
    const res = await fetch(o.base + path, {
      method,
      headers: { authorization: `Bearer ${o.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON: kept as text for the message */
    }
    return { status: res.status, body: parsed };
  };
  const tasks = makeTasks(o.seed, o.tasks);
  const logA = runArmA(o.seed, tasks);
  if (o.readerFaults && o.trials !== undefined) throw new Error("reader faults and trials are separate runs");
  const worldB = o.readerFaults ? new LyingWorld(INDEX_LAG, o.seed) : new World(INDEX_LAG);
  // Receipt times: within the last two hours, so that no read is dated ahead of the server's clock.
  const tickMs = Math.max(1, Math.floor(5_400_000 / (o.tasks * 20)));
  const logB = await runArmB({ seed: o.seed, tasks, http, prefix: runId, agent, startMs: Date.now() - 7_200_000, tickMs, isSampled: (id) => isDrawn(id, rate), world: worldB, lyingReaders: !!o.readerFaults });
  const armA = metricsOfLog(logA, "A");
  const armB = metricsOfLog(logB, "B");
  const res = await http("GET", `/api/v1/metrics?agent=${encodeURIComponent(agent)}`);
  if (res.status !== 200) throw new Error(`GET /api/v1/metrics: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  const product = (res.body as { metrics: Metrics }).metrics;
  // With lying readers the ground truth differs from anything Reconcile can know: its figures are
  // checked against its records (an unreviewed verified operation held), the truth reported beside.
  const mismatches = compare(product, o.readerFaults ? metricsOfLog(asReconcileKnowsIt(logB), "B") : armB);
  const lying = o.readerFaults
    ? readerFaultReport({
        log: logB,
        world: worldB as LyingWorld,
        // The same agent and seed with faithful readers, in-process (its metrics are the truth's then).
        baseline: metricsOfLog(await runArmB({ seed: o.seed, tasks, prefix: runId, agent, startMs: 0, tickMs: 1, isSampled: (id) => isDrawn(id, rate) }), "B"), command: o.readerFaults.command, runRate: rate, product, checkMismatches: mismatches.length })
    : undefined;
  const explained = mismatches.length ? await explain(http, agent, o.readerFaults ? asReconcileKnowsIt(logB) : logB, mismatches) : [];
  const trialMismatches: EvalResult["trialMismatches"] = [];
  let trials: Trials | undefined;
  let trialSeconds = 0;
  if (o.trials !== undefined) {
    const started = Date.now();
    trials = await runTrials({
      seed: o.seed,
      tasks,
      trials: o.trials,
      onTrial: o.onTrial,
      armB: async (faultSeed, trial) => {
        if (trial === 0) return worldB;
        if (o.trialsOffline) return offlineArmB(tasks, runId)(faultSeed, trial);
        const world = new World(INDEX_LAG);
        const agentT = `${runId}-t${trial}-arm-b`;
        const log = await runArmB({ seed: faultSeed, tasks, http, prefix: `${runId}-t${trial}`, agent: agentT, startMs: Date.now() - 7_200_000, tickMs, isSampled: (id) => isDrawn(id, rate), world });
        const got = await http("GET", `/api/v1/metrics?agent=${encodeURIComponent(agentT)}`);
        if (got.status !== 200) throw new Error(`GET /api/v1/metrics: HTTP ${got.status}`);
        const m = compare((got.body as { metrics: Metrics }).metrics, metricsOfLog(log, "B"));
        if (m.length) trialMismatches.push({ trial, mismatches: m });
        return world;
      },
    });
    trialSeconds = (Date.now() - started) / 1000;
  }
  const rows = table(armA, armB, { a: undetectedSilentFailures(logA), b: undetectedSilentFailures(logB) });
  const text = [
    `Protocol 2, seed ${o.seed}: ${o.tasks} tasks (${tasks.reduce((a, t) => a + t.steps.length, 0)} steps); arm A made ${logA.length} calls, arm B ${logB.length}.`,
    "",
    renderText(rows),
    "",
    mismatches.length
      ? `MISMATCH: Reconcile's metrics for arm B differ from the ground truth:\n${mismatches.map((m) => `  ${m.metric}.${m.field}: Reconcile ${m.product}, ground truth ${m.truth}`).join("\n")}\n${explained.join("\n")}`
      : lying
        ? `Check: the metrics Reconcile computed from arm B's records (GET /api/v1/metrics?agent=${agent}) equal what those records say (an unreviewed verified operation held); the ground truth differs, below.`
        : `Check: the metrics Reconcile computed from arm B's records (GET /api/v1/metrics?agent=${agent}) equal the ground truth (hit, n, unknown and audit samples of all five).`,
    ...(lying ? ["", lying.text] : []),
    ...(trials
      ? [
          "",
          `pass^k: ${trials.tasks} tasks × ${trials.trials} trials (trial 0 is the run above; arm B's other trials ${o.trialsOffline ? "in-process, without the server" : "through the server"}; ${trialSeconds.toFixed(1)} s):`,
          "",
          renderText(passKTable(trials)),
          ...(o.trialsOffline || trials.trials < 2
            ? []
            : [
                "",
                trialMismatches.length
                  ? `MISMATCH in trials ${trialMismatches.map((t) => `${t.trial} (${t.mismatches.map((m) => `${m.metric}.${m.field} ${m.product} ≠ ${m.truth}`).join("; ")})`).join(", ")}`
                  : `Check: ${trials.trials === 2 ? "in trial 1" : `in each of trials 1–${trials.trials - 1}`}, too, Reconcile's metrics for arm B equal the ground truth.`,
              ]),
        ]
      : []),
  ].join("\n");
  const passK = trials ? passKMarkdown(trials, { plot: o.plotPath, offline: !!o.trialsOffline, seconds: trialSeconds, mismatches: trialMismatches.length }) : "";
  const markdown = evaluationMarkdown({ passK, trials: trials?.trials, seed: o.seed, tasks: o.tasks, steps: tasks.reduce((a, t) => a + t.steps.length, 0), logA, logB, armA, armB, rows, mismatches, rate, agent });
  return { seed: o.seed, tasks: o.tasks, agent, logA, logB, armA, armB, product, mismatches, trials, trialMismatches, text, markdown, readerFaults: lying };
}

/** The operations behind a mismatch: Reconcile's list for each part of the metric against the log's. */
async function explain(http: Http, agent: string, log: OpLog[], mismatches: Comparison): Promise<string[]> {
  const facts = factsOfLog(log, "B");
  const out: string[] = [];
  for (const name of [...new Set(mismatches.map((m) => m.metric))] as MetricName[]) {
    for (const part of ["hit", "miss", "unknown"] as const) {
      const listed = new Set<string>();
      for (let cursor: string | null = null; ; ) {
        const res = await http("GET", `/api/v1/operations?agent=${encodeURIComponent(agent)}&metric=${name}&part=${part}&limit=200${cursor ? `&cursor=${cursor}` : ""}`);
        const body = res.body as { items: { operation_id: string }[]; next_cursor: string | null };
        for (const i of body.items) listed.add(i.operation_id);
        if (!body.next_cursor) break;
        cursor = body.next_cursor;
      }
      const expected = new Set([...facts].filter(([, f]) => metricPart(name, f) === part).map(([id]) => id));
      const extra = [...listed].filter((id) => !expected.has(id));
      const missing = [...expected].filter((id) => !listed.has(id));
      for (const id of [...extra, ...missing].slice(0, 5)) {
        const l = log.find((x) => x.id === id);
        out.push(`  ${name} ${part}: ${id} ${extra.includes(id) ? "listed by Reconcile, not in the ground truth" : "in the ground truth, not listed by Reconcile"}; log: ${JSON.stringify(l ? { ...l, facts: facts.get(id) } : null)}`);
      }
    }
  }
  return out;
}

const pct = (v: number | null) => (v === null ? "—" : `${(v * 100).toFixed(1)} %`);

function evaluationMarkdown(r: {
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
