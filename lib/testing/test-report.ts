/**
 * What `npm test` (lib/cli/test-all.ts) reads back from the test runners' JSON reports: the
 * counts, each failure's gist, and how long each test file took.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

export type Counts = { passed: number; failed: number; failures: string[]; files: FileTime[] };
export type FileTime = { file: string; seconds: number; step: string };

type VitestJson = {
  numPassedTests: number;
  numFailedTests: number;
  testResults?: { name: string; startTime?: number; endTime?: number; message?: string; assertionResults?: { status: string; fullName: string; failureMessages?: string[] }[] }[];
};

/** A vitest JSON report's counts; `ok` is the process's exit status (a crash with no failed test still fails). */
export function vitestReport(out: string, ok: boolean, step: string): Counts {
  if (!existsSync(out)) return { passed: 0, failed: 1, failures: [`${step}: no report was written (${out})`], files: [] };
  const j = JSON.parse(readFileSync(out, "utf8")) as VitestJson;
  const failures: string[] = [];
  const files: FileTime[] = [];
  for (const file of j.testResults ?? []) {
    const rel = path.relative(process.cwd(), file.name);
    const failedTests = (file.assertionResults ?? []).filter((a) => a.status === "failed");
    for (const a of failedTests) failures.push(`${rel} › ${a.fullName}: ${gist(a.failureMessages?.[0])}`);
    if (!failedTests.length && file.message) failures.push(`${rel}: ${gist(file.message)}`);
    if (file.startTime && file.endTime) files.push({ file: rel, seconds: (file.endTime - file.startTime) / 1000, step });
  }
  return { passed: j.numPassedTests, failed: j.numFailedTests + (ok || j.numFailedTests ? 0 : 1), failures, files };
}

type PlaywrightSuite = {
  title: string;
  file?: string;
  specs?: { title: string; line: number; ok: boolean; tests?: { results?: { duration?: number; error?: { message?: string } }[] }[] }[];
  suites?: PlaywrightSuite[];
};

/** A Playwright JSON report's counts, with each spec file's time (the sum of its tests' runs). */
export function playwrightReport(out: string, ok: boolean, step: string): Counts {
  if (!existsSync(out)) return { passed: 0, failed: 1, failures: [`${step}: no report was written (${out})`], files: [] };
  const report = JSON.parse(readFileSync(out, "utf8")) as { stats: { expected: number; flaky: number; unexpected: number }; suites?: PlaywrightSuite[] };
  const s = report.stats;
  const failures: string[] = [];
  const ms = new Map<string, number>();
  const walk = (suite: PlaywrightSuite, file: string) => {
    for (const spec of suite.specs ?? []) {
      const results = spec.tests?.flatMap((t) => t.results ?? []) ?? [];
      ms.set(file, (ms.get(file) ?? 0) + results.reduce((n, r) => n + (r.duration ?? 0), 0));
      if (!spec.ok) failures.push(`${suite.title}:${spec.line} › ${spec.title}: ${gist(results.at(-1)?.error?.message)}`);
    }
    for (const child of suite.suites ?? []) walk(child, file);
  };
  for (const suite of report.suites ?? []) walk(suite, `e2e/${suite.file ?? suite.title}`);
  const files = [...ms].map(([file, n]) => ({ file, seconds: n / 1000, step }));
  return { passed: s.expected + s.flaky, failed: s.unexpected + (ok || s.unexpected ? 0 : 1), failures, files };
}

/**
 * A failure's gist for the summary: its first line, then up to five more that are not stack
 * frames (a server's output after "the server exited (1):", an assertion's expected and received),
 * indented under it. A CI log's last lines are often all that is read of it.
 */
export function gist(message: string | undefined): string {
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

/** "1 min 05 s", "42 s". */
export function duration(seconds: number): string {
  const s = Math.round(seconds);
  return s >= 60 ? `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s` : `${s} s`;
}
