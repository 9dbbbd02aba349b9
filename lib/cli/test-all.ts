/**
 * `npm test`: the whole suite. What competes for the same resource runs alone, the rest side by
 * side on the machine's two cores:
 *   1. typecheck (the app, and the client package on its own settings: no Node types, so its main
 *      entry cannot use Node-only APIs), the PostgreSQL schema twin check and one production build
 *      in one lane; lint and unit tests beside them;
 *   2. the integration suite against the real server on SQLite, then the short reliability
 *      harnesses that assert no latency (SIGKILL trials, backpressure, jobs across crashes); beside
 *      them the same on PostgreSQL when TEST_DATABASE_URL names one (then the suites whose
 *      promises span operations again on four hash chains, and two app instances on one database);
 *   3. the harnesses that measure latency (load at 50 connections, hostile bodies), alone;
 *   4. the Playwright e2e suite in Chromium, alone.
 * `npm test -- --only e2e` (or `--only unit,integration`) runs some parts (with the build they
 * need). The summary gives each step's wall time and the ten slowest test files, and ends with
 * one plain line "N passed, N failed" counting every test (and every check step).
 */
import { spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { adminQuery, dropTestDatabase } from "../testing/drop-database";
import { leftovers, snapshot } from "../testing/leftovers";
import { duration, playwrightReport, vitestReport, type Counts, type FileTime } from "../testing/test-report";
import { sumPhases } from "../testing/phases";

const PARTS = ["typecheck", "lint", "schema", "unit", "build", "integration", "integration-pg", "reliability", "reliability-pg", "e2e"] as const;
type Part = (typeof PARTS)[number];
const NEEDS_BUILD: Part[] = ["integration", "integration-pg", "reliability", "reliability-pg", "e2e"];

type Step = { name: string; part: Part; cmd: string; args: string[]; env?: Record<string, string>; report?: (ok: boolean) => Counts; phases?: string };
type Result = Counts & { name: string; ok: boolean; seconds: number; phases?: string };

const results: Result[] = [];
// Whatever runs in this checkout before the suite starts is not the suite's to stop.
const runningBefore = snapshot();
const started = Date.now();
const bin = (name: string) => path.resolve("node_modules/.bin", name);
mkdirSync("test-results/logs", { recursive: true });

function selectedParts(argv: string[]): Set<Part> {
  const i = argv.indexOf("--only");
  if (i < 0) return new Set(PARTS);
  const asked = (argv[i + 1] ?? "").split(",").filter(Boolean);
  const unknown = asked.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (!asked.length || unknown.length) {
    console.error(`--only takes parts separated by commas${unknown.length ? `; not a part: ${unknown.join(", ")}` : ""}. The parts: ${PARTS.join(", ")}`);
    process.exit(2);
  }
  const parts = new Set(asked as Part[]);
  if ([...parts].some((p) => NEEDS_BUILD.includes(p))) parts.add("build");
  return parts;
}

/**
 * Runs one step. Alone, its output goes straight to the terminal; beside others, it is kept in
 * test-results/logs/ and printed when the step ends (all of it when it failed, its end when not).
 */
function run(step: Step, alone: boolean): Promise<Result> {
  const t0 = Date.now();
  const logFile = `test-results/logs/${step.name.replace(/\W+/g, "-").replace(/-$/, "")}.log`;
  if (alone) console.log(`\n━━ ${step.name} ━━`);
  return new Promise((resolve) => {
    const child = spawn(step.cmd, step.args, { stdio: alone ? "inherit" : ["ignore", "pipe", "pipe"], env: { ...process.env, ...step.env } });
    let output = "";
    if (!alone) {
      const log = createWriteStream(logFile);
      const keep = (chunk: Buffer) => {
        output += chunk.toString();
        log.write(chunk);
      };
      child.stdout!.on("data", keep);
      child.stderr!.on("data", keep);
      child.on("close", () => log.end());
    }
    child.on("close", (code) => {
      const ok = code === 0;
      const seconds = (Date.now() - t0) / 1000;
      if (!alone) {
        const lines = output.trimEnd().split("\n");
        const shown = ok ? lines.slice(-12) : lines;
        console.log(`\n━━ ${step.name} (${ok ? "passed" : "FAILED"}, ${duration(seconds)}; the whole output: ${logFile}) ━━`);
        if (ok && lines.length > shown.length) console.log(`   … ${lines.length - shown.length} lines before`);
        if (output.trim()) console.log(shown.join("\n"));
      }
      const counts = step.report ? step.report(ok) : { passed: ok ? 1 : 0, failed: ok ? 0 : 1, failures: [], files: [] };
      resolve({ ...counts, name: step.name, ok, seconds, phases: step.phases });
    });
  });
}

/** A line every minute naming what still runs, so a long quiet stretch of the log is not a hang. */
function heartbeat(running: Set<string>): () => void {
  const t0 = Date.now();
  const timer = setInterval(() => {
    if (running.size) console.log(`… ${duration((Date.now() - t0) / 1000)}: still running ${[...running].join(", ")}`);
  }, 60_000);
  return () => clearInterval(timer);
}

/** Lanes side by side, each lane's steps one after another. */
async function lanes(...all: Step[][]): Promise<void> {
  const used = all.filter((l) => l.length);
  if (used.length <= 1) {
    for (const s of used.flat()) results.push(await run(s, true));
    return;
  }
  const running = new Set<string>();
  const stop = heartbeat(running);
  await Promise.all(
    used.map(async (lane) => {
      for (const s of lane) {
        running.add(s.name);
        results.push(await run(s, false));
        running.delete(s.name);
      }
    }),
  );
  stop();
}

function vitest(name: string, part: Part, project: string, env: Record<string, string> = {}, files: string[] = []): Step {
  const out = `test-results/${name.replace(/\W+/g, "-")}.json`;
  // The setup phases the harnesses time (lib/testing/phases.ts): server starts, databases, command-line runs.
  const phases = path.resolve(`test-results/phases-${name.replace(/\W+/g, "-")}.jsonl`);
  rmSync(out, { force: true });
  rmSync(phases, { force: true });
  return { name, part, cmd: bin("vitest"), args: ["run", "--project", project, "--reporter=default", "--reporter=json", `--outputFile=${out}`, ...files], env: { ...env, RECONCILE_TEST_PHASES: phases }, report: (ok) => vitestReport(out, ok, name), phases };
}

const FOUR_CHAIN_SUITES = [
  "lib/reliability/model.itest.ts",
  "lib/store/queries/metrics.itest.ts",
  "lib/store/review/claims.itest.ts",
  "lib/store/review/corrections.itest.ts",
  "lib/store/review/comments.itest.ts",
  "lib/store/store.itest.ts",
  "lib/store/queries/trajectories.itest.ts",
  "lib/store/ingest/values.itest.ts",
  "lib/store/ingest/speculation.itest.ts",
];

/** A new empty database beside the one `url` names, on the same server (its name + `_suffix`). */
async function siblingDatabase(url: string, suffix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const target = new URL(url);
  const name = `${target.pathname.slice(1)}_${suffix}`.replace(/\W/g, "_").toLowerCase();
  await dropTestDatabase(url, name);
  await adminQuery(url, `CREATE DATABASE ${name}`);
  target.pathname = `/${name}`;
  return { url: target.toString(), drop: () => dropTestDatabase(url, name) };
}

/** The reliability harnesses that measure latency: they run alone. */
const MEASURING = ["lib/reliability/load.rtest.ts", "lib/reliability/hostile.rtest.ts"];

const parts = selectedParts(process.argv.slice(2));
const pg = process.env.TEST_DATABASE_URL;
const want = (steps: Step[]) => steps.filter((s) => parts.has(s.part));

// 1. Checks, unit tests and the build, in two lanes. The build writes next-env.d.ts and
// .next/types, which the typecheck reads: it starts once the typecheck has ended.
await lanes(
  want([
    { name: "typecheck", part: "typecheck", cmd: bin("tsc"), args: ["--noEmit"] },
    { name: "client package typecheck", part: "typecheck", cmd: bin("tsc"), args: ["-p", "lib/client/tsconfig.json", "--noEmit"] },
    { name: "schema twin", part: "schema", cmd: bin("tsx"), args: ["lib/cli/prisma-generate.ts", "--check"] },
    { name: "build", part: "build", cmd: bin("next"), args: ["build"] },
  ]),
  want([{ name: "lint", part: "lint", cmd: bin("eslint"), args: [".", "--max-warnings=0"] }, vitest("unit", "unit", "unit")]),
);
const built = !parts.has("build") || results.find((r) => r.name === "build")?.ok;
if (!built) {
  console.log("\nThe build failed: the integration, reliability and e2e parts need it and are left out.");
} else {
  if (!pg && (parts.has("integration-pg") || parts.has("reliability-pg"))) console.log("\nTEST_DATABASE_URL is not set: the PostgreSQL parts are left out.");
  // 2. The integration suite on each database, side by side: each run has its own server and
  // database. After each, that database's reliability harnesses that assert no latency (SIGKILL
  // trials, backpressure, jobs across crashes; two instances on PostgreSQL): the short versions
  // (the long ones are `npm run soak:*`).
  // The suites whose promises span operations run again on a database of four hash chains, where
  // the chains' transactions really run side by side (lib/domain/chains.ts): in the SQLite lane
  // (the shorter one), on a database of their own beside TEST_DATABASE_URL's (a suite resets the
  // database it is given).
  const chains = pg && parts.has("integration-pg") ? await siblingDatabase(pg, "chains") : null;
  await lanes(
    want([
      vitest("integration (SQLite)", "integration", "integration"),
      ...(chains ? [vitest("integration on four hash chains (PostgreSQL)", "integration-pg", "integration", { INTEGRATION_DATABASE_URL: chains.url, RECONCILE_CHAINS: "4" }, FOUR_CHAIN_SUITES)] : []),
      vitest("reliability (SIGKILL, backpressure, jobs)", "reliability", "reliability", {}, MEASURING.flatMap((f) => ["--exclude", f])),
    ]),
    pg
      ? want([
          vitest("integration (PostgreSQL)", "integration-pg", "integration", { INTEGRATION_DATABASE_URL: pg }),
          vitest("reliability (two instances on PostgreSQL)", "reliability-pg", "reliability-pg", { RELIABILITY_DATABASE_URL: pg }),
        ])
      : [],
  );
  await chains?.drop();
  // 3. The harnesses that hold latencies (every endpoint at 50 connections, the writer sweep,
  // hostile bodies with /api/health polled), alone.
  for (const s of want([vitest("reliability (load, writer sweep, hostile bodies)", "reliability", "reliability", {}, MEASURING)])) results.push(await run(s, true));
  // 4. The browser, alone.
  if (parts.has("e2e")) {
    const out = "test-results/e2e.json";
    rmSync(out, { force: true });
    results.push(await run({ name: "e2e (Chromium)", part: "e2e", cmd: bin("playwright"), args: ["test"], env: { PLAYWRIGHT_JSON_OUTPUT_NAME: out }, report: (ok) => playwrightReport(out, ok, "e2e") }, true));
  }
}

// Every test stops what it starts: a process of this checkout still running now is a failure.
{
  const left = await leftovers(runningBefore);
  results.push({ name: "no process left running", ok: !left.length, seconds: 0, passed: left.length ? 0 : 1, failed: left.length ? 1 : 0, files: [], failures: left.map((p) => `pid ${p.pid}: ${p.args.slice(0, 200)}`) });
  if (left.length) console.log(`\n${left.length} process(es) the tests started are still running (now stopped):\n${left.map((p) => `  ${p.pid} ${p.args}`).join("\n")}`);
  for (const p of left) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
}

console.log("\n━━ summary ━━");
for (const s of results) {
  console.log(`${s.ok ? "ok  " : "FAIL"} ${s.name}: ${s.passed} passed, ${s.failed} failed${s.seconds ? ` (${duration(s.seconds)})` : ""}`);
  // The failed tests by name, so the last lines of a CI log say what broke.
  for (const f of s.failures) console.log(`       ✗ ${f}`);
  // Where the step's time went besides the checks: each setup phase's count and time (summed over the step's files, which run one at a time).
  const phases = s.phases && existsSync(s.phases) ? sumPhases(readFileSync(s.phases, "utf8")) : [];
  if (phases.length) console.log(`       setup: ${phases.map((p) => `${p.phase} ×${p.count} ${duration(p.seconds)}${s.seconds ? ` (${Math.round((100 * p.seconds) / s.seconds)} %)` : ""}`).join("; ")}`);
}
const slowest: FileTime[] = results.flatMap((r) => r.files).sort((a, b) => b.seconds - a.seconds).slice(0, 10);
if (slowest.length) {
  console.log("the ten slowest test files (and their share of their step's wall time):");
  const stepSeconds = new Map(results.map((r) => [r.name, r.seconds]));
  for (const f of slowest) {
    const of = stepSeconds.get(f.step);
    console.log(`  ${duration(f.seconds).padStart(10)}  ${of ? `${String(Math.round((100 * f.seconds) / of)).padStart(3)} %` : "     "}  ${f.file} (${f.step})`);
  }
}
console.log(`wall time: ${duration((Date.now() - started) / 1000)}`);
const passed = results.reduce((n, s) => n + s.passed, 0);
const failed = results.reduce((n, s) => n + s.failed, 0);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || results.some((s) => !s.ok) ? 1 : 0);
