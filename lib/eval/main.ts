/**
 * `npm run eval`: Protocol 2 against a Reconcile server of its own (lib/bench/bench-server.ts: the
 * production server on a fresh database), printing the paper-style table and writing
 * docs/EVALUATION.md. Exits non-zero when the metrics Reconcile computes from arm B's records
 * differ from the environment's ground truth.
 *
 * Options: --seed N (default 1), --tasks N (default 1000), --rate R (audit sampling, default 0.1),
 * --out FILE (default docs/EVALUATION.md; --out - writes nothing), --database-url URL (an empty
 * PostgreSQL database; default a temporary SQLite file). Needs a build (`npm run build`).
 * --trials N (issue 37): pass^k for k = 1…N over N trials per task under derived fault seeds,
 * arm B through the server in each (--trials-offline: trials after the first in-process); adds
 * the table to the output and to --out, and writes the plot to --plot FILE (default
 * eval/pass-k.svg beside --out; --plot - writes none).
 * --reader-faults (issue 37 part 2): arm B's readers lie (stale replica, empty 200, cache); prints
 * Reconcile's Metrics 3 and 4 against the ground truth and what audit sampling at 5, 10 and 25 %
 * catches, and writes that section alone into --out (a run without the flag keeps it there).
 * --arms a,b,c,d (default; issue 37 part 3, issue 48 part 5): arm C is arm A's agent behind the
 * MCP gateway (lib/eval/arm-c.ts), which records to the server under a token of its own; arm D
 * the same with verifiers and await_verdict (lib/eval/arm-d.ts), in a project of its own on the
 * same server (started with the verifier allowances for 127.0.0.1); --arms a,b,c or a,b leave
 * them out (A and B always run; D needs C). Not with --reader-faults.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { addBenchToken, addProjectBenchToken, benchCli, startBenchServer } from "../bench/bench-server";
import { passKSvg } from "./plot";
import { runEval } from "./run";
import { sectionOf, withSection } from "./reader-faults";

const { values } = parseArgs({
  options: {
    seed: { type: "string", default: "1" },
    tasks: { type: "string", default: "1000" },
    rate: { type: "string", default: "0.1" },
    out: { type: "string", default: "docs/EVALUATION.md" },
    "database-url": { type: "string" },
    trials: { type: "string" },
    "trials-offline": { type: "boolean", default: false },
    plot: { type: "string" },
    "reader-faults": { type: "boolean", default: false },
    arms: { type: "string" },
  },
});

function positiveInt(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} must be a whole number, not ${raw}`);
    process.exit(2);
  }
  return n;
}

async function main() {
  const seed = positiveInt("seed", values.seed);
  const tasks = positiveInt("tasks", values.tasks);
  const rate = Number(values.rate);
  if (!(rate >= 0 && rate <= 1)) {
    console.error(`--rate is a share between 0 and 1, not ${values.rate}`);
    process.exit(2);
  }
  const trials = values.trials === undefined ? undefined : positiveInt("trials", values.trials);
  if (trials === 0) {
    console.error("--trials must be at least 1");
    process.exit(2);
  }
  if (values["reader-faults"] && trials !== undefined) {
    console.error("--reader-faults is a run of its own: leave out --trials");
    process.exit(2);
  }
  const arms = new Set((values.arms ?? (values["reader-faults"] ? "a,b" : "a,b,c,d")).split(",").map((a) => a.trim().toLowerCase()));
  if (!arms.has("a") || !arms.has("b") || [...arms].some((a) => !["a", "b", "c", "d"].includes(a)) || (arms.has("d") && !arms.has("c"))) {
    console.error(`--arms is a,b, a,b,c or a,b,c,d (arms A and B always run; D needs C), not ${values.arms}`);
    process.exit(2);
  }
  if ((arms.has("c") || arms.has("d")) && values["reader-faults"]) {
    console.error("--reader-faults runs arms A and B only: leave out c and d");
    process.exit(2);
  }
  const plot = values.plot ?? (values.out === "-" ? "-" : path.join(path.dirname(values.out), "eval", "pass-k.svg"));
  const dir = values["database-url"] ? null : mkdtempSync(path.join(os.tmpdir(), "reconcile-eval-"));
  const url = values["database-url"] ?? `file:${path.join(dir!, "eval.db")}`;
  // Arm D's verifiers read the world's read service on 127.0.0.1 over plain HTTP.
  const { base, token, server, env } = await startBenchServer(url, "ingest,verify,read,review", arms.has("d") ? { RECONCILE_VERIFIER_ALLOW_HTTP: "1", RECONCILE_VERIFIER_ALLOW_PRIVATE: "1" } : {});
  // Arm C's gateway records under a service account of its own (lib/gateway/README.md "Token").
  const gatewayToken = arms.has("c") ? addBenchToken(env, "eval-gateway@bench.test", "viewer", "ingest,read") : undefined;
  // Arm D: a project of its own (verifiers are per tool, and arms B and C record the same tools), the
  // gateway's own member there, and the benchmark's admin (an instance admin) for verifiers and the reviewer.
  let armD: { base: string; gatewayToken: string; adminToken: string } | undefined;
  if (arms.has("d")) {
    benchCli(env, "projects:add", "--slug", "eval-arm-d", "--name", "Protocol 2, arm D");
    benchCli(env, "users:add", "--email", "eval-gateway-d@bench.test", "--password", "bench-password-123", "--role", "viewer");
    benchCli(env, "members:add", "--project", "eval-arm-d", "--email", "eval-gateway-d@bench.test", "--role", "viewer");
    armD = { base, gatewayToken: addProjectBenchToken(env, "eval-gateway-d@bench.test", "eval-arm-d", "ingest,read"), adminToken: addProjectBenchToken(env, "bench@bench.test", "eval-arm-d", "admin,ingest,read,review") };
  }
  try {
    // The sampling rates are an admin's setting: set here straight on the server's database.
    process.env.DATABASE_URL = url;
    const { setAuditSampling } = await import("@/lib/store/settings/audit-sampling");
    const started = Date.now();
    const result = await runEval({ seed, tasks, base, token, samplingRate: rate, setSampling: (tool, r) => setAuditSampling({ tool, rate: r, by: "npm run eval" }),
      trials,
      gatewayToken,
      armD,
      trialsOffline: values["trials-offline"],
      plotPath: plot === "-" || values.out === "-" ? undefined : path.relative(path.dirname(values.out), plot),
      readerFaults: values["reader-faults"] ? { command: `npm run eval -- ${process.argv.slice(2).filter((a) => !a.startsWith("--database-url") && !a.startsWith("postgres")).join(" ")}` } : undefined,
      onTrial: (i) => process.stderr.write(`trial ${i + 1}/${trials} done (${((Date.now() - started) / 1000).toFixed(0)} s)\n`),
    });
    console.log(result.text);
    console.log(`\n(${((Date.now() - started) / 1000).toFixed(1)} s)`);
    if (values.out !== "-") {
      const old = existsSync(values.out) ? readFileSync(values.out, "utf8") : "";
      // The reader-fault run writes its section alone; a run without it keeps the section there.
      const kept = sectionOf(old);
      writeFileSync(values.out, result.readerFaults ? withSection(old || result.markdown, result.readerFaults.markdown) : kept ? withSection(result.markdown, kept) : result.markdown);
      console.log(`Wrote ${values.out}.`);
    }
    if (result.trials && plot !== "-") {
      mkdirSync(path.dirname(plot), { recursive: true });
      writeFileSync(plot, passKSvg(result.trials));
      console.log(`Wrote ${plot}.`);
    }
    if (result.mismatches.length || result.trialMismatches.length || result.armC?.mismatches.length || result.armD?.mismatches.length) process.exitCode = 1;
  } finally {
    server.kill("SIGTERM");
    const { disconnect } = await import("@/lib/store/db/db");
    await disconnect().catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? `eval failed: ${e.message}` : e);
  process.exit(1);
});
