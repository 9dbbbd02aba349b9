import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import { demo, signIn } from "./helpers";

/** The gateways a test started: stopGateways() in its afterEach. */
const started: ChildProcess[] = [];

/** A token for the agent's own account (the viewer), made on the tokens page as a person would. */
export async function agentToken(page: Page): Promise<string> {
  await signIn(page, demo.viewer.email, demo.viewer.password);
  await page.goto("/settings/tokens");
  await page.getByLabel("Name").fill(`gateway ${Date.now()}`);
  await page.getByLabel("read").check();
  await page.getByRole("button", { name: "Create token" }).click();
  return (await page.getByTestId("new-token").textContent())!.trim();
}

/** `reconcile-gateway --config FILE` in front of the example tool server, on a free port; its /mcp URL once ready. */
export async function startGateway(baseURL: string, token: string, tools: Record<string, unknown>): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "e2e-gateway-"));
  const config = path.join(dir, "reconcile-gateway.json");
  writeFileSync(
    config,
    JSON.stringify({
      reconcile: { url: baseURL },
      listen: { http: { port: 0 } },
      upstreams: { tools: { command: [process.execPath, "--import", "tsx", path.resolve("lib/gateway/examples/tools-server.ts")], cwd: process.cwd() } },
      tools,
    }),
  );
  const gateway = spawn(process.execPath, ["--import", "tsx", "lib/gateway/src/main.ts", "--config", config], { env: { ...process.env, RECONCILE_TOKEN: token }, stdio: ["ignore", "ignore", "pipe"] });
  started.push(gateway);
  return new Promise((resolve, reject) => {
    let err = "";
    gateway.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /ready on (http:\/\/\S+\/mcp)/.exec(err);
      if (m) resolve(m[1]);
    });
    gateway.once("exit", (code) => reject(new Error(`the gateway exited (${code}): ${err}`)));
  });
}

export async function stopGateways(): Promise<void> {
  for (const g of started.splice(0)) {
    if (g.exitCode !== null) continue;
    g.kill("SIGTERM");
    await new Promise((r) => g.once("exit", r));
  }
}
