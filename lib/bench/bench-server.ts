import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { serverArgs } from "../cli/start";

const tsx = [path.resolve("node_modules/tsx/dist/cli.mjs"), "--conditions=react-server", "lib/cli/index.ts"];

let started = 0;

/**
 * The production server on a database made for a benchmark: migrated, one admin with a token of
 * these scopes, listening on 127.0.0.1 and healthy when this returns. `extraEnv`: settings for
 * this server only; a benchmark may start servers one after another on one database (each with
 * its own admin), stopping the last first (stopBenchServer).
 */
export async function startBenchServer(url: string, scopes: string, extraEnv: Record<string, string> = {}): Promise<{ base: string; token: string; server: ChildProcess; env: NodeJS.ProcessEnv; email: string }> {
  const env = { ...process.env, DATABASE_URL: url, AUTH_SECRET: "bench-secret-0123456789abcdef0123456789", ...extraEnv };
  const email = ++started === 1 ? "bench@bench.test" : `bench-${started}@bench.test`;
  execFileSync(process.execPath, [...tsx, "db:deploy"], { env, stdio: "pipe" });
  execFileSync(process.execPath, [...tsx, "users:add", "--email", email, "--password", "bench-password-123", "--role", "admin"], { env, stdio: "pipe" });
  const token = execFileSync(process.execPath, [...tsx, "tokens:add", "--email", email, "--scopes", scopes, "--name", "bench"], { env, encoding: "utf8" }).trim().split("\n").pop()!;
  const port = 3400 + (process.pid % 500);
  // BENCH_CPU_PROF=1: the server writes a CPU profile to /tmp/prof when it stops (docs/BENCHMARKS.md).
  const server = spawn(process.execPath, [...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir=/tmp/prof"] : []), ...serverArgs()], { env: { ...env, PORT: String(port), HOSTNAME: "127.0.0.1", NODE_ENV: "production" }, stdio: "ignore" });
  // A benchmark that fails, or is stopped (Ctrl-C, a `timeout`), takes its server with it: a
  // server left running kept a database connection and its job worker running under the next runs.
  process.once("exit", () => server.kill("SIGTERM"));
  process.once("SIGINT", () => process.exit(130));
  process.once("SIGTERM", () => process.exit(143));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${base}/api/health`)).ok) break;
    } catch {
      /* starting */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { base, token, server, env, email };
}

/** Another user of the benchmark's database with a token of these scopes (e.g. a service account of its own). */
export function addBenchToken(env: NodeJS.ProcessEnv, email: string, role: "viewer" | "reviewer" | "admin", scopes: string): string {
  execFileSync(process.execPath, [...tsx, "users:add", "--email", email, "--password", "bench-password-123", "--role", role], { env, stdio: "pipe" });
  return execFileSync(process.execPath, [...tsx, "tokens:add", "--email", email, "--scopes", scopes, "--name", "bench"], { env, encoding: "utf8" }).trim().split("\n").pop()!;
}

/** Stops a server startBenchServer started and waits until it has exited (its port is free again). */
export async function stopBenchServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  server.kill("SIGTERM");
  await exited;
}

/** A token of project `slug` for a user of the benchmark's database (an instance admin is admin in every project). */
export function addProjectBenchToken(env: NodeJS.ProcessEnv, email: string, slug: string, scopes: string): string {
  return execFileSync(process.execPath, [...tsx, "tokens:add", "--email", email, "--scopes", scopes, "--name", "bench", "--project", slug], { env, encoding: "utf8" }).trim().split("\n").pop()!;
}

/** A command of the project's CLI against the benchmark's database (`projects:add`, `members:add`, …); its last line of output. */
export function benchCli(env: NodeJS.ProcessEnv, ...args: string[]): string {
  return execFileSync(process.execPath, [...tsx, ...args], { env, encoding: "utf8" }).trim().split("\n").pop() ?? "";
}
