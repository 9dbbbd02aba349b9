/**
 * `npm run soak:<kind>`: the long versions of the reliability harnesses (docs/RELIABILITY.md).
 * `npm test` runs the short ones. Needs a build (`npm run build`).
 *
 *   soak:crash  [--trials 200] [--clients 4] [--seed N]   SIGKILL the server under ingest
 *   soak:load   [--seconds 60] [--sweep-seconds 5] [--database-url URL] [--instances N]
 *                                                       everything at 50 connections, then the writer sweep
 *   soak:fuzz   [--runs 10000]                          the bad-input fuzz, on SQLite (and on PostgreSQL with --database-url)
 *   soak:model  [--runs 300]                            the model-based test
 *   soak:faults --fault cut|blackhole|delay|stall|sigstop|disk|clock|all [--runs 10] [--fault-ms 5000] [--pause-ms 30000] [--instances 2] [--database-url URL]
 *                                                       the network to PostgreSQL fails (faults.ts; URL: default RELIABILITY_DATABASE_URL),
 *                                                       or a throwaway cluster is paused with SIGSTOP (pg-cluster.ts);
 *                                                       disk: SQLite's disk fills and is freed N times (disk-full.rtest.ts, as root);
 *                                                       clock: the server's clock jumps ±1 h N times under ingest (clock.rtest.ts)
 *   soak:faults --fault failover [--runs 10] [--synchronous-commit remote_apply|local] [--lag-ms 0] [--instances 2]
 *                                                       a primary and a standby of its own; the primary SIGKILLed, the standby promoted (failover.ts)
 *
 * Without --database-url each run uses a fresh SQLite file in a temporary folder. With a
 * PostgreSQL URL, use an empty database made for the purpose: the run adds to it.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { runCrashTrials } from "../reliability/crash";
import { FAULTS, formatFault, runFault, startRig, type Fault, type FaultReport, type Rig } from "../reliability/faults";
import { formatFailover, runFailover, type FailoverReport } from "../reliability/failover";
import { startCluster } from "../reliability/pg-cluster";
import { prepareDatabase, siblingDatabase, startApp } from "../reliability/harness";
import { contentionInLog, formatTable, runMixedLoad, runWriterSweep, seedOperations, signIn } from "../reliability/load";

const [kind, ...rest] = process.argv.slice(2);
const { values } = parseArgs({
  args: rest,
  options: {
    trials: { type: "string", default: "200" },
    clients: { type: "string", default: "4" },
    seed: { type: "string" },
    seconds: { type: "string", default: "60" },
    "sweep-seconds": { type: "string", default: "5" },
    runs: { type: "string" },
    "database-url": { type: "string" },
    instances: { type: "string", default: "1" },
    fault: { type: "string", default: "all" },
    "fault-ms": { type: "string", default: "5000" },
    "pause-ms": { type: "string", default: "30000" },
    "synchronous-commit": { type: "string", default: "remote_apply" },
    "lag-ms": { type: "string", default: "0" },
  },
});

const tmp = mkdtempSync(path.join(os.tmpdir(), `reconcile-soak-${kind}-`));
const sqliteUrl = (name: string) => `file:${path.join(tmp, name)}`;

async function crash(): Promise<boolean> {
  const started = Date.now();
  const report = await runCrashTrials({
    url: sqliteUrl("crash.db"),
    trials: Number(values.trials),
    clients: Number(values.clients),
    seed: values.seed ? Number(values.seed) : undefined,
    log: (l) => console.log(l),
  });
  const restarts = [...report.restartMs].sort((a, b) => a - b);
  console.log("\n━━ crash soak ━━");
  console.log(`seed ${report.seed}; ${report.trials} SIGKILLs in ${Math.round((Date.now() - started) / 1000)} s`);
  console.log(`requests sent ${report.requestsSent}, acknowledged ${report.acknowledged}, unanswered then retried ${report.unacknowledgedRetried} (of which committed before the kill: ${report.committedButUnacknowledged})`);
  console.log(`operations stored ${report.recordsStored}, chain length ${report.chainLength}, 5xx ${report.serverErrors}`);
  console.log(`restart to healthy: median ${restarts[restarts.length >> 1]} ms, max ${restarts[restarts.length - 1]} ms`);
  console.log(report.problems.length ? `PROBLEMS (${report.problems.length}):\n${report.problems.join("\n")}` : "problems: none: integrity ok, nothing acknowledged lost, nothing half-written, chain verified, retries converged");
  return report.problems.length === 0 && report.serverErrors === 0;
}

async function load(): Promise<boolean> {
  const url = values["database-url"] ?? sqliteUrl("load.db");
  const { tokens, email, password } = await prepareDatabase(url, "soak-load");
  const apps = await Promise.all(Array.from({ length: Number(values.instances) }, () => startApp(url)));
  try {
    // A session is a signed cookie (JWT): signed in on one instance, it is valid on every one.
    const cookie = await signIn(apps[0].base, email, password);
    const ctx = { bases: apps.map((a) => a.base), token: tokens, cookie };
    const seeded = await seedOperations(ctx, 2000, 200);
    console.log(`database: ${url.startsWith("file:") ? "SQLite" : "PostgreSQL"}; ${apps.length} app instance(s); seeded ${seeded.ids.length} operations`);
    const mixed = await runMixedLoad(ctx, Number(values.seconds), seeded);
    console.log(`\n━━ everything at once: ${values.seconds} s, 50 connections ━━\n${formatTable(mixed)}`);
    const writers = [1, 2, 4, 8, 16, 32];
    const s = Number(values["sweep-seconds"]);
    const sweep = [...(await runWriterSweep(ctx, "ingest", writers, s, [])), ...(await runWriterSweep(ctx, "corrections", writers, s, seeded.divergent.slice(6)))];
    console.log(`\n━━ writer sweep: ${s} s per step ━━\n${formatTable(sweep)}`);
    const contention = apps.flatMap((a) => contentionInLog(a.output()));
    const failures = [...mixed, ...sweep].reduce((n, r) => n + r.failures, 0);
    console.log(`\nfailures (5xx, network errors, unexpected statuses): ${failures}; lock errors in the server log: ${contention.length}`);
    for (const r of [...mixed, ...sweep]) for (const f of r.failureSamples) console.log(`  ${r.endpoint}: ${f}`);
    for (const l of contention.slice(0, 10)) console.log(`  log: ${l}`);
    return failures === 0 && contention.length === 0;
  } finally {
    await Promise.all(apps.map((a) => a.stop()));
  }
}

/** Faults whose harness is a test file of the reliability project, run with its runs count (SQLite). */
const FILE_FAULTS = {
  disk: { file: "lib/reliability/disk-full.rtest.ts", runs: "RELIABILITY_DISK_RUNS" },
  clock: { file: "lib/reliability/clock.rtest.ts", runs: "RELIABILITY_CLOCK_RUNS" },
} as const;
type FileFault = keyof typeof FILE_FAULTS;
async function failover(): Promise<boolean> {
  const runs = Number(values.runs ?? "10");
  const instances = values.instances === "1" ? 2 : Number(values.instances);
  const synchronousCommit = values["synchronous-commit"];
  if (synchronousCommit !== "remote_apply" && synchronousCommit !== "local") throw new Error("--synchronous-commit must be remote_apply or local");
  const reports: FailoverReport[] = [];
  for (let run = 1; run <= runs; run++) {
    const r = await runFailover({ synchronousCommit, instances, lagMs: Number(values["lag-ms"]) });
    reports.push(r);
    console.log(`run ${run}: ${formatFailover(r)}`);
    for (const p of r.problems) console.log(`  PROBLEM ${p}`);
  }
  const sum = (k: (r: FailoverReport) => number) => reports.reduce((a, r) => a + k(r), 0);
  const rec = reports.map((r) => r.recoverMs).sort((a, b) => a - b);
  const promote = reports.map((r) => r.promoteMs).sort((a, b) => a - b);
  console.log(`\n━━ failover soak: ${runs} runs, ${instances} instances, synchronous_commit=${synchronousCommit}, standby ${values["lag-ms"]} ms behind at the kill ━━`);
  console.log("| fault | runs | requests | acknowledged | lost | refused 503 meanwhile | longest answer ms | promote ms (median / max) | recover ms (median / max) | problems |");
  console.log(`| failover (${synchronousCommit}) | ${runs} | ${sum((r) => r.sent)} | ${sum((r) => r.acknowledged)} | ${sum((r) => r.lost)} | ${sum((r) => r.refusedMeanwhile)} | ${Math.max(...reports.map((r) => r.longestMs))} | ${promote[promote.length >> 1]} / ${promote[promote.length - 1]} | ${rec[rec.length >> 1]} / ${rec[rec.length - 1]} | ${sum((r) => r.problems.length)} |`);
  return reports.every((r) => r.problems.length === 0);
}

async function faults(): Promise<boolean> {
  if (values.fault === "failover") return failover();
  const base = values["database-url"] ?? process.env.RELIABILITY_DATABASE_URL;
  const all: (Fault | FileFault)[] = [...FAULTS, "sigstop", "disk", "clock"];
  const asked = values.fault === "all" ? all : (values.fault!.split(",") as (Fault | FileFault)[]);
  for (const f of asked) if (!all.includes(f)) throw new Error(`--fault must be one of ${all.join(", ")} or all, not ${f}`);
  // The disk (a tmpfs the harness mounts: run as root) and the clock (a fake-time layer in the server).
  let filesOk = true;
  for (const f of asked.filter((f): f is FileFault => f in FILE_FAULTS)) {
    const { file, runs } = FILE_FAULTS[f];
    filesOk = vitestFile(file, { [runs]: values.runs ?? "10" }, "reliability", false) && filesOk;
  }
  const names = asked.filter((f): f is Fault => !(f in FILE_FAULTS));
  if (!names.length) return filesOk;
  const proxied = names.filter((f) => f !== "sigstop");
  if (proxied.length && !base?.startsWith("postgres")) throw new Error("soak:faults needs PostgreSQL: --database-url postgresql://… (or RELIABILITY_DATABASE_URL); it makes a database beside it");
  const runs = Number(values.runs ?? "10");
  const instances = values.instances === "1" ? 2 : Number(values.instances);
  const reports: FaultReport[] = [];
  // The proxy's faults on a database beside `base`; SIGSTOP on a throwaway cluster (pg-cluster.ts), never the shared one.
  const rigs: { faults: Fault[]; rig: Rig; done: () => Promise<void> }[] = [];
  try {
    if (proxied.length) {
      const db = await siblingDatabase(base!, "soak_faults");
      const rig = await startRig(db.url, instances);
      rigs.push({ faults: proxied, rig, done: async () => (await rig.close(), await db.drop()) });
    }
    if (names.includes("sigstop")) {
      const cluster = await startCluster();
      const db = await siblingDatabase(cluster.url, "faults");
      const rig = await startRig(db.url, instances, cluster);
      rigs.push({ faults: ["sigstop"], rig, done: async () => (await rig.close(), await cluster.stop()) });
    }
    for (let run = 1; run <= runs; run++) {
      for (const { faults: mine, rig } of rigs) {
        for (const f of mine) {
          const r = await runFault(rig, f, { faultMs: f === "sigstop" ? Number(values["pause-ms"]) : Number(values["fault-ms"]) });
          reports.push(r);
          console.log(`run ${run}: ${formatFault(r)}`);
          for (const p of r.problems) console.log(`  PROBLEM ${p}`);
        }
      }
    }
  } finally {
    for (const r of rigs) await r.done();
  }
  console.log(`\n━━ faults soak: ${runs} runs, ${instances} instances, ${values["fault-ms"]} ms each (SIGSTOP ${values["pause-ms"]} ms) ━━`);
  console.log("| fault | runs | requests | acknowledged | lost | refused 503 / 429 | longest answer ms | recover ms (median / max) | problems |");
  for (const f of names) {
    const mine = reports.filter((r) => r.fault === f);
    const rec = mine.map((r) => r.recoverMs).sort((a, b) => a - b);
    const sum = (k: (r: FaultReport) => number) => mine.reduce((a, r) => a + k(r), 0);
    const lost = mine.flatMap((r) => r.problems).filter((p) => p.includes("missing")).length;
    console.log(`| ${f} | ${mine.length} | ${sum((r) => r.sent)} | ${sum((r) => r.acknowledged)} | ${lost} | ${sum((r) => r.statuses["503"] ?? 0)} / ${sum((r) => r.statuses["429"] ?? 0)} | ${Math.max(...mine.map((r) => r.longestMs))} | ${rec[rec.length >> 1]} / ${rec[rec.length - 1]} | ${sum((r) => r.problems.length)} |`);
    const rss = mine.filter((r) => r.rssMiB).map((r) => r.rssMiB!.max - r.rssMiB!.before);
    if (rss.length) console.log(`  ${f}: RSS growth of the servers during the fault, max ${Math.max(...rss)} MiB; pages ${mine.flatMap((r) => r.pages ?? []).map((p) => p.status).join(",")} (max ${Math.max(...mine.flatMap((r) => r.pages ?? []).map((p) => p.ms))} ms)`);
  }
  return filesOk && reports.every((r) => r.problems.length === 0);
}

function vitestFile(file: string, env: Record<string, string>, project = "integration", alsoPostgres = true): boolean {
  const vitest = path.resolve("node_modules/.bin/vitest");
  const run = (extra: Record<string, string>) =>
    spawnSync(vitest, ["run", "--project", project, file], { stdio: "inherit", env: { ...process.env, ...env, ...extra } }).status === 0;
  let ok = run({});
  if (alsoPostgres && values["database-url"]) ok = run({ INTEGRATION_DATABASE_URL: values["database-url"] }) && ok;
  return ok;
}

async function main() {
  let ok: boolean;
  switch (kind) {
    case "crash":
      ok = await crash();
      break;
    case "load":
      ok = await load();
      break;
    case "fuzz":
      ok = vitestFile("lib/reliability/fuzz.itest.ts", { RELIABILITY_FUZZ_RUNS: values.runs ?? "10000" });
      break;
    case "faults":
      ok = await faults();
      break;
    case "model":
      ok = vitestFile("lib/reliability/model.itest.ts", { RELIABILITY_MODEL_RUNS: values.runs ?? "300" });
      break;
    default:
      console.error("usage: npm run soak:crash | soak:load | soak:fuzz | soak:model | soak:faults  (see lib/bench/soak.ts)");
      process.exit(2);
  }
  rmSync(tmp, { recursive: true, force: true });
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
