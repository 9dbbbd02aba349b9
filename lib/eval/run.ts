import { isDrawn, metricPart, type MetricName, type Metrics } from "@/lib/domain/metrics";
import { INDEX_LAG, runArmA, runArmB, type Http, type OpLog } from "./arms";
import { compare, factsOfLog, metricsOfLog, renderText, table, undetectedSilentFailures, type Comparison } from "./report";
import { makeTasks } from "./tasks";
import { offlineArmB, passKMarkdown, passKTable, runTrials, type Trials } from "./trials";
import { TOOLS, World } from "./world";
import { LyingWorld } from "./readers";
import { evaluationMarkdown } from "./markdown";
import { runArmC, withoutClaims, type ArmCResult } from "./arm-c";
import { asReconcileKnowsIt, readerFaultReport, type ReaderFaultReport } from "./reader-faults";
import { runArmD, type ArmDResult } from "./arm-d";
import { armDTargets } from "./markdown-d";

/**
 * Protocol 2 (000 §VII), end to end: the benchmark, arms A and B (and C, behind the MCP gateway,
 * given the gateway's token), the paper-style table, and the check that the metrics Reconcile
 * computes from arm B's (and C's) records (GET /api/v1/metrics) equal the environment's ground truth. `npm run eval` (lib/eval/main.ts) runs it against a server of
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
  /**
   * Issue 37 part 3: arm C, arm A's agent behind the MCP gateway (lib/eval/arm-c.ts), run when
   * given the gateway's own token (ingest, read). Its trials go through the gateway too.
   */
  gatewayToken?: string;
  /**
   * Issue 48 part 5: arm D, arm C's agent behind the gateway with verifiers and await_verdict
   * (lib/eval/arm-d.ts), run when given a Reconcile of its own (a server that lets verifiers read
   * 127.0.0.1 over HTTP; another project of the same server will do): the gateway's token
   * (ingest, read) and an admin's (verifiers, the reviewer on duty and the one after the run:
   * admin, ingest, read, review). Needs gatewayToken (arm C) too: D is read beside C. Its trials
   * go through it, with the reviewer on duty (as arm B's trials have theirs), without the one after.
   */
  armD?: { base: string; gatewayToken: string; adminToken: string };
};

/** Arm D's figures: its log, Reconcile's metrics for it, and the duplicates each arm left in its world. */
export type ArmDReport = ArmDResult & {
  agent: string;
  metrics: Metrics;
  product: Metrics;
  mismatches: Comparison;
  duplicates: { A: number; B: number; C: number; D: number };
};

/** Arm C's figures: its log, Reconcile's metrics for it, and the duplicates each arm left in its world. */
export type ArmCReport = ArmCResult & {
  agent: string;
  metrics: Metrics;
  product: Metrics;
  mismatches: Comparison;
  /** Effects applied again while wholly in place, per arm, from each arm's world. */
  duplicates: { A: number; B: number; C: number };
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
  armC?: ArmCReport;
  armD?: ArmDReport;
};

/** Reconcile's API at `base` under `token`: JSON in, JSON (or the text) out. */
export function httpFor(base: string, token: string): Http {
  return async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
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
}

export async function runEval(o: EvalOptions): Promise<EvalResult> {
  const rate = o.samplingRate ?? 0.1;
  const runId = o.runId ?? `eval${o.seed}`;
  const agent = `${runId}-arm-b`;
  for (const tool of TOOLS) await o.setSampling(tool, rate);
  const http = httpFor(o.base, o.token);
  const tasks = makeTasks(o.seed, o.tasks);
  const worldA = new World(INDEX_LAG);
  const logA = runArmA(o.seed, tasks, worldA);
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
  let armC: ArmCReport | undefined;
  if (o.gatewayToken) {
    if (o.readerFaults) throw new Error("arm C runs without reader faults");
    const agentC = `${runId}-arm-c`;
    const c = await runArmC({ seed: o.seed, tasks, base: o.base, gatewayToken: o.gatewayToken, prefix: `${runId}-c`, agent: agentC, review: http });
    const got = await http("GET", `/api/v1/metrics?agent=${encodeURIComponent(agentC)}`);
    if (got.status !== 200) throw new Error(`GET /api/v1/metrics: HTTP ${got.status} ${JSON.stringify(got.body).slice(0, 300)}`);
    const productC = (got.body as { metrics: Metrics }).metrics;
    // The gateway records no claim: Reconcile's figures are checked against the log without the agent's beliefs.
    armC = { ...c, agent: agentC, metrics: metricsOfLog(c.log, "B"), product: productC, mismatches: compare(productC, metricsOfLog(withoutClaims(c.log), "B")), duplicates: { A: worldA.duplicates, B: worldB.duplicates, C: c.world.duplicates } };
  }
  let armD: ArmDReport | undefined;
  const adminD = o.armD && httpFor(o.armD.base, o.armD.adminToken);
  if (o.armD && adminD) {
    if (!armC) throw new Error("arm D is read beside arm C: give gatewayToken too");
    const agentD = `${runId}-arm-d`;
    const d = await runArmD({ seed: o.seed, tasks, base: o.armD.base, gatewayToken: o.armD.gatewayToken, admin: adminD, prefix: `${runId}-d`, agent: agentD, review: true });
    const got = await adminD("GET", `/api/v1/metrics?agent=${encodeURIComponent(agentD)}`);
    if (got.status !== 200) throw new Error(`GET /api/v1/metrics (arm D): HTTP ${got.status} ${JSON.stringify(got.body).slice(0, 300)}`);
    const productD = (got.body as { metrics: Metrics }).metrics;
    armD = { ...d, agent: agentD, metrics: metricsOfLog(d.log, "B"), product: productD, mismatches: compare(productD, metricsOfLog(withoutClaims(d.log), "B")), duplicates: { ...armC.duplicates, D: d.world.duplicates } };
  }
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
      ...(armC
        ? {
            armC: async (faultSeed: number, trial: number) => {
              if (trial === 0) return armC.world;
              const world = new World(INDEX_LAG);
              await runArmC({ seed: faultSeed, tasks, base: o.base, gatewayToken: o.gatewayToken!, prefix: `${runId}-t${trial}-c`, agent: `${runId}-t${trial}-arm-c`, world });
              return world;
            },
          }
        : {}),
      ...(armD && o.armD && adminD
        ? {
            armD: async (faultSeed: number, trial: number) => {
              if (trial === 0) return armD.world;
              const world = new World(INDEX_LAG);
              await runArmD({ seed: faultSeed, tasks, base: o.armD!.base, gatewayToken: o.armD!.gatewayToken, admin: adminD, prefix: `${runId}-t${trial}-d`, agent: `${runId}-t${trial}-arm-d`, world });
              return world;
            },
          }
        : {}),
    });
    trialSeconds = (Date.now() - started) / 1000;
  }
  const rows = table(armA, armB, { a: undetectedSilentFailures(logA), b: undetectedSilentFailures(logB), c: armC && undetectedSilentFailures(armC.log) }, armC?.metrics);
  const text = [
    `Protocol 2, seed ${o.seed}: ${o.tasks} tasks (${tasks.reduce((a, t) => a + t.steps.length, 0)} steps); arm A made ${logA.length} calls, arm B ${logB.length}${armC ? `, arm C ${armC.log.length} (the agent sent ${armC.calls})` : ""}.`,
    "",
    renderText(rows),
    "",
    mismatches.length
      ? `MISMATCH: Reconcile's metrics for arm B differ from the ground truth:\n${mismatches.map((m) => `  ${m.metric}.${m.field}: Reconcile ${m.product}, ground truth ${m.truth}`).join("\n")}\n${explained.join("\n")}`
      : lying
        ? `Check: the metrics Reconcile computed from arm B's records (GET /api/v1/metrics?agent=${agent}) equal what those records say (an unreviewed verified operation held); the ground truth differs, below.`
        : `Check: the metrics Reconcile computed from arm B's records (GET /api/v1/metrics?agent=${agent}) equal the ground truth (hit, n, unknown and audit samples of all five).`,
    ...(lying ? ["", lying.text] : []),
    ...(armC ? ["", armCText(armC)] : []),
    ...(armD && armC ? ["", armDText(armD, armB, armC.prevented)] : []),
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
  const markdown = evaluationMarkdown({ passK, trials: trials?.trials, seed: o.seed, tasks: o.tasks, steps: tasks.reduce((a, t) => a + t.steps.length, 0), logA, logB, armA, armB, rows, mismatches, rate, agent, armC, armD });
  return { seed: o.seed, tasks: o.tasks, agent, logA, logB, armA, armB, product, mismatches, trials, trialMismatches, text, markdown, readerFaults: lying, armC, armD };
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

/** Arm C's lines in the command's output: duplicates, and the check of Reconcile's figures. */
export function armCText(c: ArmCReport): string {
  const refused = c.heldBack.filter((h) => h.answer === "refused").length;
  return [
    `Arm C (the gateway): ${c.heldBack.length} repeats held back (${refused} refused, ${c.heldBack.length - refused} replayed); duplicates prevented: ${c.prevented}.`,
    `Effects applied again while wholly in place (each arm's world): A ${c.duplicates.A}, B ${c.duplicates.B}, C ${c.duplicates.C}.`,
    c.mismatches.length
      ? `MISMATCH: Reconcile's metrics for arm C differ from the ground truth:\n${c.mismatches.map((m) => `  ${m.metric}.${m.field}: Reconcile ${m.product}, ground truth ${m.truth}`).join("\n")}`
      : `Check: the metrics Reconcile computed from the gateway's records of arm C (GET /api/v1/metrics?agent=${c.agent}) equal the ground truth (claims aside: the gateway records none).`,
  ].join("\n");
}

/** Arm D's lines in the command's output: issue 48's targets, the verifiers' reads, duplicates, and the check of Reconcile's figures. */
export function armDText(d: ArmDReport, b: Metrics, preventedC: number): string {
  const refused = d.heldBack.filter((h) => h.answer === "refused").length;
  return [
    ...armDTargets(d, b, preventedC).map((t) => `Target: ${t.target}: ${t.measured} — ${t.met ? "met" : "NOT met"}.`),
    `Arm D (the gateway with verifiers and await_verdict): verifier reads ${Object.entries(d.reads).filter(([, n]) => n).map(([k, n]) => `${k} ${n}`).join(", ")}; the reviewer on duty resolved ${d.onDuty.length} divergent calls (${d.onDuty.filter((r) => r.outcome === "not_applied").length} not applied); ${d.heldBack.length} repeats held back (${refused} refused, ${d.heldBack.length - refused} replayed); duplicates prevented: ${d.prevented}.`,
    d.mismatches.length
      ? `MISMATCH: Reconcile's metrics for arm D differ from the ground truth:\n${d.mismatches.map((m) => `  ${m.metric}.${m.field}: Reconcile ${m.product}, ground truth ${m.truth}`).join("\n")}`
      : `Check: the metrics Reconcile computed from the gateway's records of arm D (GET /api/v1/metrics?agent=${d.agent}) equal the ground truth (claims aside: the gateway records none).`,
  ].join("\n");
}
