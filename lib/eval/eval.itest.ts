import { describe, expect, it } from "vitest";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";
import { runArmA } from "./arms";
import { compare, metricsOfLog } from "./report";
import { makeTasks } from "./tasks";
import { runEval } from "./run";

/**
 * `npm run eval` in small (300 tasks) against the suite's real server: Reconcile's metrics for
 * arm B must equal the environment's ground truth, the run must be a function of its seed, and
 * the check must catch a difference when the records stop matching the truth.
 */
describe("Protocol 2 (npm run eval)", () => {
  // Two runs of 300 tasks over HTTP: about a minute on SQLite, more on PostgreSQL on a busy machine.
  it("a small run: Reconcile's figures equal the ground truth, the same seed gives the same table, and the check is not vacuous", { timeout: 300_000 }, async () => {
    const { token } = await principal("reviewer", ["ingest", "verify", "read", "review"]);
    const { setAuditSampling } = await import("@/lib/store/settings/audit-sampling");
    const setSampling = (tool: string, rate: number) => setAuditSampling({ tool, rate, by: "eval.itest" });
    const first = await runEval({ seed: 7, tasks: 300, base: baseUrl, token, setSampling, runId: unique("ev") });
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

    const again = await runEval({ seed: 7, tasks: 300, base: baseUrl, token, setSampling, runId: unique("ev") });
    expect(again.mismatches).toEqual([]);
    expect(again.armA).toEqual(first.armA);
    // Audit draws hash the operation ids, which carry the run's id here (one database for both
    // runs); npm run eval names them by the seed alone, so there the samples repeat too.
    const withoutSamples = (m: typeof first.armB) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, { ...v, from_samples: undefined }]));
    expect(withoutSamples(again.armB)).toEqual(withoutSamples(first.armB));
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
});
