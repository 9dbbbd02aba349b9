/**
 * `npm run cli` itself, as operators run it (tsx on lib/cli/index.ts): the other test files run
 * the command line from a bundle of the same source built once per test run
 * (lib/testing/cli-bundle.ts), which must answer exactly as it does.
 */
import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";
import { call, unique } from "@/lib/testing/integration";
import { runCliSync } from "@/lib/testing/cli";
import { tsxCliCommand } from "@/lib/testing/cli-bundle";

const npmCli = (args: string[]) => spawnSync("npm", ["run", "--silent", "cli", "--", ...args], { env: process.env, encoding: "utf8" });

it("npm run cli makes a user and a token that the server accepts", () => {
  const email = `${unique("npm-cli")}@itest.example`;
  const user = npmCli(["users:add", "--email", email, "--password", "integration-password", "--role", "viewer"]);
  expect(user.stderr).toBe("");
  expect(user.stdout).toBe(`created viewer ${email}\n`);
  expect(user.status).toBe(0);
  const token = npmCli(["tokens:add", "--email", email, "--scopes", "read", "--name", "npm-cli"]);
  expect(token.status, token.stderr).toBe(0);
  const secret = token.stdout.trim().split("\n").at(-1)!;
  expect(secret).toMatch(/^rcl_/);
  return call("/api/v1/operations?limit=1", { token: secret }).then((r) => expect(r.status).toBe(200));
});

it("the command line the tests run answers as npm run cli does: the same output and exit status", () => {
  for (const args of [[], ["tokens:add", "--email", `${unique("nobody")}@itest.example`, "--scopes", "read", "--name", "x"]]) {
    const tsx = spawnSync(process.execPath, [...tsxCliCommand(), ...args], { env: process.env, encoding: "utf8" });
    const tests = runCliSync(args);
    expect({ status: tests.status, stdout: tests.stdout, stderr: tests.stderr }).toEqual({ status: tsx.status, stdout: tsx.stdout, stderr: tsx.stderr });
    expect(tsx.status).not.toBe(0);
  }
});
