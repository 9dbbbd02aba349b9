import { spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { cliCommand } from "./cli-bundle";
import { recordPhase } from "./phases";

/**
 * The command line (`npm run cli -- …`) on the database `url` names (with `env` added): its
 * exit status and what it printed. Run from the bundle the test run built of the same source
 * (lib/testing/cli-bundle.ts) when there is one, else through tsx as `npm run cli` runs it.
 */
export function runCli(url: string, args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cliCommand(), ...args], { env: { ...process.env, ...env, DATABASE_URL: url } });
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
  const r = spawnSync(process.execPath, [...cliCommand(), ...args], { env: { ...process.env, ...env }, encoding: "utf8" });
  recordPhase("command-line run", performance.now() - t0);
  return r;
}
