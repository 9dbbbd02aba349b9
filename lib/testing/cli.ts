import { spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import path from "node:path";
import { recordPhase } from "./phases";

/**
 * The command line (`npm run cli -- …`) as an operator runs it, on the database `url` names
 * (with `env` added): its exit status and what it printed.
 */
export function runCli(url: string, args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "--conditions=react-server", "lib/cli/index.ts", ...args], { env: { ...process.env, ...env, DATABASE_URL: url } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (status) => {
      recordPhase("command-line run", performance.now() - t0);
      resolve({ status, stdout, stderr });
    });
  });
}

/**
 * The same, waiting for it (spawnSync): `env` is added to this process's environment, whose
 * DATABASE_URL is the suite's database unless `env` names another.
 */
export function runCliSync(args: string[], env: Record<string, string> = {}): SpawnSyncReturns<string> {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "--conditions=react-server", "lib/cli/index.ts", ...args], { env: { ...process.env, ...env }, encoding: "utf8" });
  recordPhase("command-line run", performance.now() - t0);
  return r;
}
