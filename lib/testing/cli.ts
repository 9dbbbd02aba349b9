import { spawn } from "node:child_process";
import path from "node:path";

/**
 * The command line (`npm run cli -- …`) as an operator runs it, on the database `url` names
 * (with `env` added): its exit status and what it printed.
 */
export function runCli(url: string, args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "--conditions=react-server", "lib/cli/index.ts", ...args], { env: { ...process.env, ...env, DATABASE_URL: url } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}
