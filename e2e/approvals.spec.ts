import { expect, test } from "@playwright/test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { demo, ingestAsSignedIn, noSeriousA11yViolations, shot, signIn } from "./helpers";
import { agentToken, startGateway, stopGateways } from "./gateway-helpers";

const TOOLS = { "billing.charge": { operation_id_from: "/request_id", approval: { when: [{ pointer: "/amount", gt: 100 }] } } };

/**
 * Issue 40: a call the MCP gateway holds waits in the Approvals tab; a reviewer approves it in
 * the browser and the MCP client that was waiting gets the tool's result.
 */
test.afterEach(stopGateways);

for (const size of ["desktop", "phone"] as const) {
  test(`a reviewer approves a held call and the waiting MCP client gets its result (${size})`, async ({ browser, baseURL }) => {
    test.setTimeout(60_000);
    const agentPage = await (await browser.newContext()).newPage();
    const url = await startGateway(baseURL!, await agentToken(agentPage), TOOLS);
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
