import { describe, expect, it } from "vitest";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";
import { isDrawn } from "@/lib/domain/metrics";
import { INDEX_LAG, runArmA, runArmB } from "./arms";
import { compare, metricsOfLog } from "./report";
import { makeTasks } from "./tasks";
import { runEval } from "./run";
import { World } from "./world";
import { LyingWorld } from "./readers";
import { trueRecall } from "./reader-faults";
import { withoutClaims } from "./arm-c";
import { startVerifierApp } from "@/lib/verifiers/testing/verifier-app";
import { armDTargets } from "./markdown-d";

/**
 * `npm run eval` in small (300 tasks) against the suite's real server: Reconcile's metrics for
 * arm B must equal the environment's ground truth, the run must be a function of its seed, and
 * the check must catch a difference when the records stop matching the truth. pass^k (issue 37)
 * in small: 8 trials, those after the first in-process — shown to be the same agent, its log and
 * final state equal to the server's run — and a tiny run whose extra trial goes through the server.
 */
describe("Protocol 2 (npm run eval)", () => {
  // Two runs of 300 tasks over HTTP: about a minute on SQLite, more on PostgreSQL on a busy machine.
  it("a small run: Reconcile's figures equal the ground truth, the same seed gives the same table, and the check is not vacuous", { timeout: 300_000 }, async () => {
    const { token } = await principal("reviewer", ["ingest", "verify", "read", "review"]);
    const { setAuditSampling } = await import("@/lib/store/settings/audit-sampling");
    const setSampling = (tool: string, rate: number) => setAuditSampling({ tool, rate, by: "eval.itest" });
    const runId = unique("ev");
    const first = await runEval({ seed: 7, tasks: 300, base: baseUrl, token, setSampling, runId, trials: 8, trialsOffline: true });
    expect(first.mismatches).toEqual([]);
    expect(first.logB.length).toBeGreaterThan(300);
    // Every kind of evidence the table rests on is there.
    expect(first.armB.verification_precision.n).toBeGreaterThan(0);
    expect(first.armB.recovery_rate.n).toBeGreaterThan(0);
    expect(first.armB.grounding_accuracy.from_samples).toBeGreaterThan(0);
    expect(first.armA.verification_recall).toMatchObject({ hit: 0 });
    expect(first.armA.verification_recall.n).toBeGreaterThan(0);
    expect(first.text).toContain("equal the ground truth");
    expect(first.markdown).toContain("| 1. Grounding accuracy |");

    // pass^k: trials after the first run arm B in-process. The same agent without the server makes
    // the same calls and leaves the same environment as the run through the server (trial 0).
    const tasks = makeTasks(7, 300);
    const offline = new World(INDEX_LAG);
    const offlineLog = await runArmB({ seed: 7, tasks, prefix: runId, agent: first.agent, startMs: 0, tickMs: 1, isSampled: (id) => isDrawn(id, 0.1), world: offline });
    expect(offlineLog).toEqual(first.logB);
    const trials = first.trials!;
    expect(offline.tasksAtGoal(tasks).size).toBe(trials.perTrial.B[0]);
    for (const arm of ["A", "B"] as const) {
      const all = trials.curves[arm].all as number[];
      expect(all).toHaveLength(8);
      for (let k = 1; k < 8; k++) expect(all[k]).toBeLessThanOrEqual(all[k - 1]);
    }
    // With Reconcile the agent reaches the goal state more often, and more reliably across runs.
    expect(trials.curves.B.all[0]!).toBeGreaterThan(trials.curves.A.all[0]!);
    expect(trials.curves.B.all[7]!).toBeGreaterThan(trials.curves.A.all[7]!);
    expect(first.text).toContain("pass^8");
    expect(first.markdown).toContain("## Reliability across runs (pass^k)");
    expect(first.markdown).toContain("| B | all | 300 |");

    const again = await runEval({ seed: 7, tasks: 300, base: baseUrl, token, setSampling, runId: unique("ev"), trials: 8, trialsOffline: true });
    expect(again.mismatches).toEqual([]);
    expect(again.armA).toEqual(first.armA);
    // Audit draws hash the operation ids, which carry the run's id here (one database for both
    // runs); npm run eval names them by the seed alone, so there the samples repeat too.
    const withoutSamples = (m: typeof first.armB) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, { ...v, from_samples: undefined }]));
    expect(withoutSamples(again.armB)).toEqual(withoutSamples(first.armB));
    expect(again.trials!.curves).toEqual(trials.curves);

    // A trial through the server, as the full run makes them: Reconcile's metrics are checked in it too.
    const tiny = await runEval({ seed: 7, tasks: 25, base: baseUrl, token, setSampling, runId: unique("ev"), trials: 2 });
    expect(tiny.mismatches).toEqual([]);
    expect(tiny.trialMismatches).toEqual([]);
    expect(tiny.text).toContain("in trial 1, too, Reconcile's metrics for arm B equal the ground truth");
    // Another seed, another experiment (arm A needs no server).
    expect(metricsOfLog(runArmA(8, makeTasks(8, 300)), "A")).not.toEqual(first.armA);

    // A reviewer reopens one of arm B's resolutions: Reconcile's records no longer match the
    // environment, and the comparison says so.
    const resolved = first.logB.find((l) => l.review === "not_applied")!;
    const op = await call(`/api/v1/operations/${resolved.id}`, { token });
    const reopened = await call(`/api/v1/operations/${resolved.id}/corrections`, {
      token,
      body: { action: "reopen", reason: "eval.itest: make the records disagree", expected_last_correction_id: op.body.corrections.at(-1).id },
    });
    expect(reopened.status, JSON.stringify(reopened.body)).toBe(201);
    const now = await call(`/api/v1/metrics?agent=${encodeURIComponent(first.agent)}`, { token });
    expect(compare(now.body.metrics, first.armB).length).toBeGreaterThan(0);
  });

  // Issue 37 part 2: readers that lie. A small run (seed 13: three lies verified in 50 tasks) through the server with every verified
  // operation an audit sample (rate 1, so that the draw, which hashes the run's ids, cannot leave
  // the lies unseen): Reconcile's figures equal what its records say, the lies are real (verified,
  // effect absent), reviewers catch every one of them, and the product's Metric 4 is then the truth.
  it("readers that lie: verified operations whose effect did not hold, caught by audit samples", { timeout: 120_000 }, async () => {
    const { token } = await principal("reviewer", ["ingest", "verify", "read", "review"]);
    const { setAuditSampling } = await import("@/lib/store/settings/audit-sampling");
    const setSampling = (tool: string, rate: number) => setAuditSampling({ tool, rate, by: "eval.itest" });
    const runId = unique("rf");
    const r = await runEval({ seed: 13, tasks: 50, base: baseUrl, token, setSampling, runId, samplingRate: 1, readerFaults: { command: "eval.itest" } });
    for (const tool of ["env.users.create", "env.files.write", "env.ledger.transfer", "env.queue.publish", "env.index.put", "env.billing.charge_and_notify"]) await setSampling(tool, 0.1);
    expect(r.mismatches).toEqual([]);
    const rf = r.readerFaults!;
    expect(rf.lies.stale + rf.lies.empty_body + rf.lies.cache).toBeGreaterThan(0);
    const hidden = r.logB.filter((l) => l.verdict === "verified" && l.actual === "not_held");
    expect(hidden.length).toBeGreaterThan(0);
    expect(rf.verifiedNotHeld).toBe(hidden.length);
    // Every lie reached the queue, was retracted and resolved not applied through the API.
    for (const l of hidden.slice(0, 3)) {
      const op = await call(`/api/v1/operations/${encodeURIComponent(l.id)}`, { token });
      expect(op.body.corrections.map((c: { action: string }) => c.action), JSON.stringify(op.body).slice(0, 300)).toEqual(["retract", "resolve"]);
      expect(op.body.effective_outcome).toBe("not_applied");
    }
    expect(r.product.verification_recall.hit).toBe(trueRecall(r.logB).hit);
    expect(r.product.verification_recall.n).toBe(trueRecall(r.logB).n);
    // At 5 %, 10 % and 25 % the plain recall is biased upwards; each row's HT weight is 1/rate.
    for (const row of rf.rows) {
      expect(row.product.verification_recall.value!).toBeGreaterThanOrEqual(rf.recall.value!);
      expect(row.ht.missed).toBeCloseTo(row.caught / row.rate + (row.product.verification_recall.n - row.product.verification_recall.hit - row.caught));
    }
    expect(r.text).toContain("Readers that lie");
    expect(rf.markdown).toContain("| 25 % |");
    // The same agent in-process meets the same lies (the experiment is a function of its seed).
    const offline = new LyingWorld(INDEX_LAG, 13);
    const log = await runArmB({ seed: 13, tasks: makeTasks(13, 50), prefix: runId, agent: r.agent, startMs: 0, tickMs: 1, isSampled: () => true, world: offline, lyingReaders: true });
    expect(log).toEqual(r.logB);
  });

  // Issue 37 part 3: arm C, arm A's agent behind the real MCP gateway. A small run (seed 7, 20 tasks:
  // three false failures whose repeats arm A applies twice), twice, through the suite's server.
  it("arm C: the gateway records every call, and refuses the repeats that would have applied an effect twice", { timeout: 120_000 }, async () => {
    const { token } = await principal("reviewer", ["ingest", "verify", "read", "review"]);
    const gateway = await principal("viewer", ["ingest", "read"]);
    const { setAuditSampling } = await import("@/lib/store/settings/audit-sampling");
    const setSampling = (tool: string, rate: number) => setAuditSampling({ tool, rate, by: "eval.itest" });
    const ids = [unique("ac"), unique("ac")];
    const run = (runId: string) => runEval({ seed: 7, tasks: 20, base: baseUrl, token, setSampling, runId, gatewayToken: gateway.token, trials: 2, trialsOffline: true });
    const r = await run(ids[0]);
    const c = r.armC!;
    expect(r.mismatches).toEqual([]);
    // Reconcile's metrics from the gateway's records equal the world's truth (claims aside: the gateway records none).
    expect(c.mismatches).toEqual([]);
    expect(c.product).toEqual(metricsOfLog(withoutClaims(c.log), "B"));
    expect(c.product.silent_failure_rate.n).toBeGreaterThan(0);
    expect(c.product.recovery_rate.n).toBeGreaterThan(0);
    // The gateway forwarded what arm A would have sent, up to each refused repeat.
    expect(c.log.length).toBeGreaterThan(20);
    const op = await call(`/api/v1/operations/${encodeURIComponent(c.log[0].id)}`, { token });
    expect(op.body).toMatchObject({ agent: { name: c.agent }, tool: { name: c.log[0].tool } });
    // Duplicates prevented, from the world: every refused repeat found its step's effect wholly in
    // place, the tool never saw it, and the effects arm A applied twice are exactly those prevented.
    expect(c.prevented).toBeGreaterThan(0);
    expect(c.prevented).toBe(c.duplicates.A);
    const tasks20 = makeTasks(7, 20);
    for (const h of c.heldBack) expect(c.world.holds(tasks20.find((t) => t.id === h.task)!.steps[h.step])).toBe(true);
    for (const h of c.heldBack) expect(h.text).toMatch(/^not sent again: the earlier env\.[a-z._]+ call is uncertain/);
    expect(c.duplicates.C).toBe(0);
    expect(r.trials!.curves.C!.all).toHaveLength(2);
    expect(r.markdown).toContain("Arm C");
    // The same seed, the same arm C.
    const again = await run(ids[1]);
    const same = (x: unknown, runId: string) => JSON.parse(JSON.stringify(x).replaceAll(runId, "RUN"));
    expect(same({ ...again.armC!, world: undefined, product: undefined }, ids[1])).toEqual(same({ ...c, world: undefined, product: undefined }, ids[0]));
    expect(again.trials!.curves).toEqual(r.trials!.curves);
  });

  // Issue 48 part 5: arm D, the same agent behind the gateway with verifiers and await_verdict. Its
  // Reconcile is a server of its own (its verifiers read the world on 127.0.0.1 over plain HTTP,
  // which the suite's server does not allow), A–C on the suite's. 20 tasks (seed 7), twice.
  it("arm D: the gateway answers with the verdict its verifiers read, a reviewer on duty settles the divergent ones, and Reconcile's figures equal the truth", { timeout: 180_000 }, async () => {
    const own = await startVerifierApp("armd", { RECONCILE_VERIFIER_ALLOW_HTTP: "1", RECONCILE_VERIFIER_ALLOW_PRIVATE: "1" });
    try {
      const { token } = await principal("reviewer", ["ingest", "verify", "read", "review"]);
      const gatewayC = await principal("viewer", ["ingest", "read"]);
      const { setAuditSampling } = await import("@/lib/store/settings/audit-sampling");
      const setSampling = (tool: string, rate: number) => setAuditSampling({ tool, rate, by: "eval.itest" });
      const [admin, gatewayD] = await ownTokens(own.db.url, [["admin", ["admin", "ingest", "read", "review"]], ["viewer", ["ingest", "read"]]]);
      const ids = [unique("ad"), unique("ad")];
      const run = (runId: string) =>
        runEval({ seed: 7, tasks: 20, base: baseUrl, token, setSampling, runId, gatewayToken: gatewayC.token, armD: { base: own.app.base, gatewayToken: gatewayD, adminToken: admin }, trials: 2, trialsOffline: true });
      const r = await run(ids[0]);
      const d = r.armD!;
      expect(d.mismatches).toEqual([]);
      expect(d.product).toEqual(metricsOfLog(withoutClaims(d.log), "B"));
      // The verifiers decided: verified and divergent calls, each told to the agent as its read decided.
      expect(d.log.filter((l) => l.verdict === "verified").length).toBeGreaterThan(20);
      expect(d.log.some((l) => l.verdict === "divergent")).toBe(true);
      expect(d.reads.match).toBeGreaterThan(0);
      // A divergent call was an error to the agent; a verified one a result it believed.
      for (const l of d.log.filter((x) => x.accepted)) expect(l.claim).toBe(l.verdict === "divergent" ? "other" : "success");
      // Faithful reads: every verdict is the truth.
      expect(d.log.filter((l) => (l.verdict === "verified" && l.actual !== "held") || (l.verdict === "divergent" && l.actual === "held"))).toEqual([]);
      const read = async (id: string) => (await (await fetch(`${own.app.base}/api/v1/operations/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${admin}` } })).json()) as any;
      expect((await read(d.log.find((l) => l.verdict === "verified")!.id)).effective_outcome).toBe("verified");
      // The reviewer on duty: every call answered divergent was resolved before the agent's next
      // call, so the agent's ordinary repeat went through as a new attempt that recovers it and
      // the gateway refused no repeat of a divergent call (only the uncertain ones, as in arm C).
      const divergent = d.log.filter((l) => l.verdict === "divergent");
      expect(d.onDuty.map((o) => o.id)).toEqual(divergent.map((l) => l.id));
      for (const h of d.heldBack) expect(h.text).toMatch(/^not sent again: the earlier env\.[a-z._]+ call is uncertain/);
      const recovered = d.log.filter((l) => l.recovers.length && divergent.some((x) => x.id === l.recovers[0]) && l.verdict === "verified");
      expect(recovered.length).toBeGreaterThan(0);
      expect(recovered[0].id).toMatch(/~[23]$/);
      const retried = await read(recovered[0].id);
      expect(retried).toMatchObject({ effective_outcome: "verified", recovers: [recovered[0].recovers[0]] });
      const settled = await read(recovered[0].recovers[0]);
      expect(settled.corrections.map((c: { action: string; outcome?: string; reason: string }) => [c.action, c.reason])).toEqual([["resolve", "on duty: probed the backend, the effect is not there"]]);
      expect(settled.effective_outcome).toBe("not_applied");
      expect(d.metrics.recovery_rate.hit).toBeGreaterThanOrEqual(recovered.length);
      expect(armDTargets(d, r.armB, r.armC!.prevented)).toHaveLength(3);
      expect(r.trials!.curves.D!.all).toHaveLength(2);
      expect(r.markdown).toContain("## Arm D: the same agent behind the gateway, with verifiers");
      // The same seed, the same arm D and the same table.
      const again = await run(ids[1]);
      const same = (x: unknown, runId: string) => JSON.parse(JSON.stringify(x).replaceAll(runId, "RUN"));
      expect(same({ ...again.armD!, world: undefined }, ids[1])).toEqual(same({ ...d, world: undefined }, ids[0]));
      expect(again.trials!.curves).toEqual(r.trials!.curves);
      const section = (md: string, runId: string) => same(md.slice(md.indexOf("## Arm D"), md.indexOf("## Reliability")), runId);
      expect(section(again.markdown, ids[1])).toEqual(section(r.markdown, ids[0]));
    } finally {
      await own.stop();
    }
  });
});

/** Users and tokens on another server's database (a verifier app's), made through the real use cases. */
async function ownTokens(url: string, who: ["admin" | "viewer", string[]][]): Promise<string[]> {
  const previous = process.env.DATABASE_URL;
  const { disconnect } = await import("@/lib/store/db/db");
  process.env.DATABASE_URL = url;
  try {
    const { createUser } = await import("@/lib/store/people/users");
    const { createApiToken } = await import("@/lib/store/people/api-tokens");
    const out: string[] = [];
    for (const [role, scopes] of who) {
      const email = `${unique(role)}@armd.test`;
      await createUser({ email, password: "integration-password", role, actor: "itest", via: "cli" });
      out.push((await createApiToken({ email, name: "itest", scopes, actor: "itest" })).token);
    }
    return out;
  } finally {
    await disconnect();
    process.env.DATABASE_URL = previous;
  }
}
