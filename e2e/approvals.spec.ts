import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { demo, ingestAsSignedIn, noSeriousA11yViolations, shot, signIn } from "./helpers";

/**
 * Issue 40: a call the MCP gateway holds waits in the Approvals tab; a reviewer approves it in
 * the browser and the MCP client that was waiting gets the tool's result.
 */
let gateway: ChildProcess | null = null;
test.afterEach(async () => {
  if (gateway && gateway.exitCode === null) {
    gateway.kill("SIGTERM");
    await new Promise((r) => gateway!.once("exit", r));
  }
  gateway = null;
});

/** A token for the agent's own account (the viewer), made on the tokens page as a person would. */
async function agentToken(page: Page): Promise<string> {
  await signIn(page, demo.viewer.email, demo.viewer.password);
  await page.goto("/settings/tokens");
  await page.getByLabel("Name").fill(`gateway ${Date.now()}`);
  await page.getByLabel("read").check();
  await page.getByRole("button", { name: "Create token" }).click();
  return (await page.getByTestId("new-token").textContent())!.trim();
}

async function startGateway(baseURL: string, token: string): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "e2e-gateway-"));
  const config = path.join(dir, "reconcile-gateway.json");
  writeFileSync(
    config,
    JSON.stringify({
      reconcile: { url: baseURL },
      listen: { http: { port: 0 } },
      upstreams: { tools: { command: [process.execPath, "--import", "tsx", path.resolve("lib/gateway/examples/tools-server.ts")], cwd: process.cwd() } },
      tools: { "billing.charge": { operation_id_from: "/request_id", approval: { when: [{ pointer: "/amount", gt: 100 }] } } },
    }),
  );
  gateway = spawn(process.execPath, ["--import", "tsx", "lib/gateway/src/main.ts", "--config", config], { env: { ...process.env, RECONCILE_TOKEN: token }, stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let err = "";
    gateway!.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /ready on (http:\/\/\S+\/mcp)/.exec(err);
      if (m) resolve(m[1]);
    });
    gateway!.once("exit", (code) => reject(new Error(`the gateway exited (${code}): ${err}`)));
  });
}

for (const size of ["desktop", "phone"] as const) {
  test(`a reviewer approves a held call and the waiting MCP client gets its result (${size})`, async ({ browser, baseURL }) => {
    test.setTimeout(60_000);
    const agentPage = await (await browser.newContext()).newPage();
    const url = await startGateway(baseURL!, await agentToken(agentPage));
    const client = new Client({ name: `e2e-agent-${size}`, version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const requestId = `charge-${size}-${Date.now()}`;
    const waiting = client.callTool({ name: "billing.charge", arguments: { amount: 480, currency: "EUR", request_id: requestId } });

    const context = await browser.newContext(size === "phone" ? { viewport: { width: 390, height: 844 } } : {});
    const page = await context.newPage();
    await signIn(page, demo.reviewer.email, demo.reviewer.password);
    await page.goto("/review/approvals");
    const card = page.locator(`article[data-operation="${requestId}"]`);
    await expect(async () => {
      await page.reload();
      await expect(card).toBeVisible({ timeout: 1000 });
    }).toPass({ timeout: 15_000 });
    await expect(card).toContainText("billing.charge: /amount > 100");
    await expect(card).toContainText(`by e2e-agent-${size}`);
    await expect(card).toContainText(/\dm \d+s left/);
    await expect(page.getByRole("link", { name: /approvals \(\d+\)/ })).toHaveAttribute("aria-current", "page");
    await shot(page, `approvals-${size}`);
    await noSeriousA11yViolations(page);

    // Keyboard: the focused card is the current one; a opens its approval and asks why.
    await card.focus();
    await page.keyboard.press("a");
    const reason = card.getByLabel("Why may it go out?");
    await expect(reason).toBeFocused();
    await reason.fill("The customer confirmed the order by phone.");
    await reason.press("Control+Enter");
    await expect(card.getByText("Approved: the gateway forwards the call now.")).toBeVisible();

    const result = (await waiting) as { isError?: boolean; content: { text: string }[] };
    expect(result.isError).toBeFalsy();
    expect(result.content[0].text).toMatch(/^charged 480 EUR/);
    await client.close();

    await page.goto(`/operations/${requestId}`);
    await expect(page.getByRole("heading", { name: "Approved" })).toBeVisible();
    await expect(page.getByText(`Approved by ${demo.reviewer.email}`)).toBeVisible();
    await expect(page.getByText(/Forwarded once, by/)).toBeVisible();
    await shot(page, `approved-operation-${size}`);
  });
}

test("a viewer sees a held call, with its rule and arguments, but cannot decide it", async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
  const id = `held-viewer-${Date.now()}`;
  const approval = { status: "pending", expires_at: new Date(Date.now() + 600_000).toISOString(), rule: "billing.charge: /amount > 100", rule_version: "r1" };
  await ingestAsSignedIn(page, { operation_id: id, tool: { name: "billing.charge" }, intent: { params: { amount: 900 } }, approval });
  await page.goto("/review/approvals");
  const card = page.locator(`article[data-operation="${id}"]`);
  await expect(card).toContainText("billing.charge: /amount > 100");
  await expect(card).toContainText("900");
  await expect(card.getByRole("button", { name: /Approve|Deny/ })).toHaveCount(0);
  await noSeriousA11yViolations(page);
});
