import { expect, test } from "@playwright/test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";
import { agentToken, startGateway, stopGateways } from "./gateway-helpers";

/**
 * Issue 48: an agent behind the gateway is answered with the verdict, not the receipt, and the
 * operation's page shows what it was told. The canonical read comes from a reviewer's session
 * here (the e2e server runs no verifier against a local service), while the call waits for it.
 */
test.afterEach(stopGateways);

test("the operation page of a gateway call shows the verdict the agent was given", async ({ browser, baseURL }) => {
  test.setTimeout(60_000);
  const agentPage = await (await browser.newContext()).newPage();
  const url = await startGateway(baseURL!, await agentToken(agentPage), { "social.publish": { operation_id_from: "/request_id", receipt_id_from: "/id", await_verdict: "30s" } });
  const client = new Client({ name: "e2e-verdict-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const requestId = `post-verdict-${Date.now()}`;
  const answer = client.callTool({ name: "social.publish", arguments: { text: "read back before the agent is answered", request_id: requestId } }) as Promise<CallToolResult>;

  // A reviewer reads the post back (as a verifier would) once its receipt is recorded.
  const page = await (await browser.newContext()).newPage();
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  const origin = new URL(page.url()).origin;
  let receipt: { payload: { receipt_id: string; observed_at: string } } | undefined;
  await expect(async () => {
    const op = await (await page.request.get(`/api/v1/operations/${requestId}`)).json();
    receipt = op.stages?.find((s: { stage: string }) => s.stage === "receipt");
    expect(receipt).toBeDefined();
  }).toPass({ timeout: 20_000 });
  const read = await page.request.post("/api/v1/receipts", {
    headers: { origin },
    data: { operation_id: requestId, canonical_read: { status: "match", observed_at: new Date().toISOString(), evidence: { object_id: receipt!.payload.receipt_id } } },
  });
  expect(read.status()).toBe(200); // stored on the operation the gateway created

  const result = await answer;
  expect(result.isError).toBeFalsy();
  const said = (result.content as { type: string; text: string }[]).at(-1)!.text;
  expect(said).toBe("Reconcile: verified (canonical state matches the intended effect)");
  expect(result._meta?.["reconcile/outcome"]).toMatchObject({ operation_id: requestId, outcome: "verified" });
  await client.close();

  for (const size of ["desktop", "phone"] as const) {
    if (size === "phone") await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`/operations/${requestId}`);
    const told = page.getByTestId("attempts");
    await expect(told.getByRole("heading", { name: "What the agent was told" })).toBeVisible();
    await expect(told).toContainText("answered with Reconcile's verdict");
    await expect(told).toContainText(said);
    await expect(told).toContainText("e2e-verdict-agent");
    await shot(page, `gateway-verdict-${size}`);
  }
  await noSeriousA11yViolations(page);
});
