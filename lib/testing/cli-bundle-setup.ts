/**
 * Vitest global setup of the suites that run the command line (integration, reliability): the
 * command line bundled once for the run (lib/testing/cli-bundle.ts), named to the test files by
 * RECONCILE_TEST_CLI_BUNDLE, and removed after the run. Bundles that runs killed before their
 * teardown left behind (their process gone) are removed first.
 */
import { readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { buildCliBundle, CLI_BUNDLE_ENV, CLI_BUNDLE_ROOT } from "./cli-bundle";
import { timed } from "./phases";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export default async function setup() {
  const root = path.resolve(CLI_BUNDLE_ROOT);
  let left: string[] = [];
  try {
    left = readdirSync(root);
  } catch {
    // none yet
  }
  for (const name of left) {
    const pid = Number(name.split("-")[0]);
    if (!Number.isInteger(pid) || !alive(pid)) rmSync(path.join(root, name), { recursive: true, force: true });
  }
  const bundle = await timed("command line bundled", () => buildCliBundle());
  process.env[CLI_BUNDLE_ENV] = bundle.entry;
  return () => {
    delete process.env[CLI_BUNDLE_ENV];
    bundle.remove();
  };
}
