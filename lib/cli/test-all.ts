/**
 * `npm test`: the whole suite, in order: typecheck (the app, and the client package on its own
 * settings: no Node types, so its main entry cannot use Node-only APIs), lint, the PostgreSQL schema twin check,
 * unit tests, a production build, integration tests against the real server on SQLite (and on
 * PostgreSQL when TEST_DATABASE_URL names one), the short reliability harnesses (SIGKILL, load;
 * two instances on PostgreSQL), and the Playwright e2e suite in Chromium.
 * Ends with one plain line "N passed, N failed" counting every test (and every check step).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { leftovers, snapshot } from "../testing/leftovers";

type Step = { name: string; passed: number; failed: number; ok: boolean; failures?: string[] };
const steps: Step[] = [];
// Whatever runs in this checkout before the suite starts is not the suite's to stop.
const runningBefore = snapshot();
const bin = (name: string) => path.resolve("node_modules/.bin", name);
mkdirSync("test-results", { recursive: true });

function run(name: string, cmd: string, args: string[], env: Record<string, string> = {}): boolean {
  console.log(`\n━━ ${name} ━━`);
  const r = spawnSync(cmd, args, { stdio: "inherit", env: { ...process.env, ...env } });
  return r.status === 0;
}

function check(name: string, cmd: string, args: string[]) {
  const ok = run(name, cmd, args);
  steps.push({ name, passed: ok ? 1 : 0, failed: ok ? 0 : 1, ok });
}

function vitest(name: string, project: string, env: Record<string, string> = {}, files: string[] = []) {
  const out = `test-results/${name.replace(/\W+/g, "-")}.json`;
  rmSync(out, { force: true });
  const ok = run(name, bin("vitest"), ["run", "--project", project, "--reporter=default", "--reporter=json", `--outputFile=${out}`, ...files], env);
  let passed = 0;
  let failed = ok ? 0 : 1;
  let failures: string[] = [];
  if (existsSync(out)) {
    const j = JSON.parse(readFileSync(out, "utf8"));
    passed = j.numPassedTests;
    failed = j.numFailedTests + (ok || j.numFailedTests ? 0 : 1);
    failures = vitestFailures(j);
  }
  steps.push({ name, passed, failed, ok, failures });
}

type VitestJson = { testResults?: { name: string; message?: string; assertionResults?: { status: string; fullName: string; failureMessages?: string[] }[] }[] };

/** "file › test: the gist of its failure", for each failed test (and each file that failed to load). */
function vitestFailures(j: VitestJson): string[] {
  const lines: string[] = [];
  for (const file of j.testResults ?? []) {
    const rel = path.relative(process.cwd(), file.name);
    const failedTests = (file.assertionResults ?? []).filter((a) => a.status === "failed");
    for (const a of failedTests) lines.push(`${rel} › ${a.fullName}: ${gist(a.failureMessages?.[0])}`);
    if (!failedTests.length && file.message) lines.push(`${rel}: ${gist(file.message)}`);
  }
  return lines;
}

type PlaywrightSuite = { title: string; specs?: { title: string; line: number; ok: boolean; tests?: { results?: { error?: { message?: string } }[] }[] }[]; suites?: PlaywrightSuite[] };

function playwrightFailures(suites: PlaywrightSuite[]): string[] {
  const lines: string[] = [];
  const walk = (s: PlaywrightSuite) => {
    for (const spec of s.specs ?? []) {
      if (spec.ok) continue;
      const results = spec.tests?.flatMap((t) => t.results ?? []) ?? [];
      lines.push(`${s.title}:${spec.line} › ${spec.title}: ${gist(results.at(-1)?.error?.message)}`);
    }
    for (const child of s.suites ?? []) walk(child);
  };
  for (const s of suites) walk(s);
  return lines;
}

/**
 * A failure's gist for the summary: its first line, then up to five more that are not stack
 * frames (a server's output after "the server exited (1):", an assertion's expected and received),
 * indented under it. A CI log's last lines are often all that is read of it.
 */
function gist(message: string | undefined): string {
  const plain = (message ?? "").replace(/\u001b\[[0-9;]*m/g, "");
  const lines = plain
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("at "));
  return lines
    .slice(0, 6)
    .map((l) => l.slice(0, 240))
    .join("\n           ");
}

function playwright() {
  const out = "test-results/e2e.json";
  rmSync(out, { force: true });
  const ok = run("e2e (Chromium)", bin("playwright"), ["test"], { PLAYWRIGHT_JSON_OUTPUT_NAME: out });
  let passed = 0;
  let failed = ok ? 0 : 1;
  let failures: string[] = [];
  if (existsSync(out)) {
    const report = JSON.parse(readFileSync(out, "utf8"));
    const s = report.stats;
    passed = s.expected + s.flaky;
    failed = s.unexpected + (ok || s.unexpected ? 0 : 1);
    failures = playwrightFailures(report.suites ?? []);
  }
  steps.push({ name: "e2e (Chromium)", passed, failed, ok, failures });
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

check("typecheck", bin("tsc"), ["--noEmit"]);
check("client package typecheck", bin("tsc"), ["-p", "lib/client/tsconfig.json", "--noEmit"]);
check("lint", bin("eslint"), [".", "--max-warnings=0"]);
check("schema twin", bin("tsx"), ["lib/cli/prisma-generate.ts", "--check"]);
vitest("unit", "unit");
const built = run("build", bin("next"), ["build"]);
steps.push({ name: "build", passed: built ? 1 : 0, failed: built ? 0 : 1, ok: built });
if (built) {
  vitest("integration (SQLite)", "integration");
  if (process.env.TEST_DATABASE_URL) {
    vitest("integration (PostgreSQL)", "integration", { INTEGRATION_DATABASE_URL: process.env.TEST_DATABASE_URL });
    // The suites whose promises span operations, again on a database of four hash chains, where
    // the chains' transactions really run side by side (lib/domain/chains.ts).
    vitest("integration on four hash chains (PostgreSQL)", "integration", { INTEGRATION_DATABASE_URL: process.env.TEST_DATABASE_URL, RECONCILE_CHAINS: "4" }, FOUR_CHAIN_SUITES);
  } else {
    console.log("\nTEST_DATABASE_URL is not set: the PostgreSQL integration run is left out.");
  }
  // Short versions of the reliability harnesses (the long ones are `npm run soak:*`).
  vitest("reliability (SIGKILL, load, writer sweep)", "reliability");
  if (process.env.TEST_DATABASE_URL) {
    vitest("reliability (two instances on PostgreSQL)", "reliability-pg", { RELIABILITY_DATABASE_URL: process.env.TEST_DATABASE_URL });
  }
  playwright();
}

// Every test stops what it starts: a process of this checkout still running now is a failure.
{
  const left = await leftovers(runningBefore);
  steps.push({ name: "no process left running", passed: left.length ? 0 : 1, failed: left.length ? 1 : 0, ok: !left.length, failures: left.map((p) => `pid ${p.pid}: ${p.args.slice(0, 200)}`) });
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
for (const s of steps) {
  console.log(`${s.ok ? "ok  " : "FAIL"} ${s.name}: ${s.passed} passed, ${s.failed} failed`);
  // The failed tests by name, so the last lines of a CI log say what broke.
  for (const f of s.failures ?? []) console.log(`       ✗ ${f}`);
}
const passed = steps.reduce((n, s) => n + s.passed, 0);
const failed = steps.reduce((n, s) => n + s.failed, 0);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || steps.some((s) => !s.ok) ? 1 : 0);
