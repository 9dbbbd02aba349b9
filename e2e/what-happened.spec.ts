import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { demo, ingestAsSignedIn, noSeriousA11yViolations, shot, signIn } from "./helpers";
import { agentToken, startGateway, stopGateways } from "./gateway-helpers";

/**
 * Issue 50: pages lead with what happened, not the id; the operation page's act comes first;
 * a phone shows the queue as cards; bulk triage answers where you click; the queue is readable;
 * approval cards show what a reviewer judges; the demo's example agent holds one call.
 */
test.afterEach(stopGateways);

const phone = { width: 390, height: 844 };
const desktop = { width: 1440, height: 900 };
const noSidewaysScroll = async (page: Page) => expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(page.viewportSize()!.width);

test("a gateway operation leads with its tool, target and key argument, its id short and copyable, its act first", async ({ browser, baseURL }) => {
  test.setTimeout(60_000);
  const agentPage = await (await browser.newContext()).newPage();
  const url = await startGateway(baseURL!, await agentToken(agentPage), { "social.publish": {} });
  const client = new Client({ name: "e2e-lead-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const text = `Launch notes ${Date.now()}`;
  const result = (await client.callTool({ name: "social.publish", arguments: { text } })) as CallToolResult;
  await client.close();
  const id = (result._meta?.["reconcile/outcome"] as { operation_id: string }).operation_id;
  expect(id).toMatch(/^gw:[0-9a-f]{64}:\d+$/);
  const short = `gw:${id.slice(3, 11)}…:${id.split(":")[2]}`;
  const lead = `social.publish · tools · text: ${text}`;

  const context = await browser.newContext({ viewport: desktop });
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const page = await context.newPage();
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  const row = page.locator("tbody tr").filter({ hasText: text });
  // The gateway sends its records in batches: the operation is listed once they are in.
  await expect(async () => {
    await page.goto("/operations?tool=social.publish");
    await expect(row).toHaveCount(1, { timeout: 1000 });
  }).toPass({ timeout: 15_000 });
  await expect(row.getByRole("link")).toHaveText(`${lead}${short}`);
  await expect(row.getByTitle(id, { exact: true })).toHaveText(short);
  await row.getByRole("button", { name: `Copy the id ${id}` }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(id);
  await shot(page, "issue50-operations-desktop");

  await row.getByRole("link").click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(lead);
  await expect(page).toHaveTitle(new RegExp(`^social\\.publish · tools · text: ${text} \\(gw:`));
  await expect(page.getByTitle(id, { exact: true })).toHaveText(short);
  // The act first: outcome, reason, retry and the reviewer's buttons, above the five stages.
  const act = page.getByRole("region", { name: "Outcome and review" });
  await expect(act).toContainText("Retry:");
  await expect(act.getByRole("button", { name: `Claim ${id}` })).toBeVisible();
  await expect(act.getByRole("button", { name: "Resolve", exact: true })).toBeVisible();
  const intent = page.getByRole("region", { name: "1. Intent" });
  expect((await act.boundingBox())!.y).toBeLessThan((await intent.boundingBox())!.y);
  // The arguments without a click; the tool's answer as text.
  await expect(intent.getByRole("definition").filter({ hasText: text })).toBeVisible();
  await expect(page.getByRole("region", { name: "2. Receipt" }).getByRole("heading", { name: "What the tool answered" })).toBeVisible();
  await expect(page.getByRole("region", { name: "2. Receipt" })).toContainText('"url":"https://social.example/posts/');
  await shot(page, "issue50-gateway-operation-desktop");
  await noSeriousA11yViolations(page);

  await page.setViewportSize(phone);
  await page.reload();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(lead);
  // On a phone the act is on the first screen.
  const box = (await page.getByRole("region", { name: "Outcome and review" }).getByRole("button", { name: "Resolve", exact: true }).boundingBox())!;
  expect(box.y + box.height).toBeLessThan(phone.height);
  await noSidewaysScroll(page);
  await shot(page, "issue50-gateway-operation-phone");
  await context.close();
});

test("at 390 px the queue and the list are cards showing outcome and claim without sideways scroll; the overview is 2×3; Review's tabs take a line", async ({ page }) => {
  await page.setViewportSize(phone);
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  await page.goto("/review");
  await noSidewaysScroll(page);
  const row = page.getByRole("table", { name: /Operations that need review/ }).locator("tbody tr").first();
  for (const part of [row.getByText(/^(divergent|uncertain|rejected)$/).first(), row.getByRole("button", { name: /^(Claim|Take over) / }), row.locator("time").first()]) {
    await expect(part).toBeVisible();
    const b = (await part.boundingBox())!;
    expect(b.x).toBeGreaterThanOrEqual(0);
    expect(b.x + b.width).toBeLessThanOrEqual(phone.width);
  }
  // The tabs and the filters: two lines, not a third of the screen.
  const tabs = (await page.getByRole("navigation", { name: "Review tabs" }).boundingBox())!;
  const filters = (await page.getByRole("navigation", { name: "Queue filters" }).boundingBox())!;
  expect(tabs.height + filters.height).toBeLessThan(phone.height / 8);
  await shot(page, "issue50-review-phone");
  await noSeriousA11yViolations(page);

  await page.goto("/operations");
  await noSidewaysScroll(page);
  const first = page.locator("tbody tr").first();
  const badge = (await first.getByText(/^(verified|uncertain|divergent|rejected|not applied|compensated)$/).first().boundingBox())!;
  expect(badge.x + badge.width).toBeLessThanOrEqual(phone.width);
  await shot(page, "issue50-operations-phone");

  await page.goto("/?period=90d");
  const cards = page.getByRole("list", { name: "Operations by effective outcome" }).getByRole("listitem");
  await expect(cards).toHaveCount(6);
  const boxes = await Promise.all((await cards.all()).map(async (c) => (await c.boundingBox())!));
  expect(new Set(boxes.map((b) => Math.round(b.x))).size).toBe(2);
  expect(new Set(boxes.map((b) => Math.round(b.y))).size).toBe(3);
  await shot(page, "issue50-overview-phone");

  await page.goto("/review/approvals");
  expect((await page.getByRole("navigation", { name: "Review tabs" }).boundingBox())!.height).toBeLessThan(60);
  await expect(page.getByRole("navigation", { name: "Queue filters" })).toHaveCount(0);
});

for (const size of ["desktop", "phone"] as const) {
  test(`selecting one row brings the triage bar, with its count and actions, onto the screen (${size})`, async ({ page }) => {
    const viewport = size === "phone" ? phone : desktop;
    await page.setViewportSize(viewport);
    await signIn(page, demo.reviewer.email, demo.reviewer.password);
    await page.goto("/review");
    const bar = page.getByRole("form", { name: /Triage the selected/ });
    const first = page.getByRole("table", { name: /Operations that need review/ }).locator("tbody tr").first();
    await first.getByRole("checkbox").check();
    await expect(bar.getByRole("heading")).toHaveText("Triage the selected (1)");
    const b = (await bar.boundingBox())!;
    expect(b.y).toBeGreaterThanOrEqual(0);
    expect(b.y + b.height).toBeLessThanOrEqual(viewport.height);
    await expect(bar.getByRole("button", { name: "Resolve 1 selected" })).toBeVisible();
    await expect(bar.getByLabel("retract — withdraw the claimed success")).toBeVisible();
    // What the screen shows (not the whole page): the bar at its bottom.
    await page.screenshot({ path: `test-results/screenshots/issue50-bulk-bar-${size}.png` });
    await bar.getByRole("button", { name: "Clear selection" }).click();
    await expect(bar.getByRole("heading")).toHaveText("Triage the selected (0)");
  });
}

test("the queue says its order and sorts newest first; old items and claimed successes are a filter and a column, not a badge a row", async ({ page }) => {
  await page.setViewportSize(desktop);
  await signIn(page, demo.viewer.email, demo.viewer.password);
  await page.goto("/review");
  const table = page.getByRole("table", { name: "Operations that need review, oldest call first" });
  await expect(table.getByRole("columnheader", { name: "Agent claimed" })).toBeVisible();
  await expect(page.getByText("claimed success", { exact: true })).toHaveCount(0);
  await expect(page.getByText(/^over 24 h old$/)).toHaveCount(1);
  const called = async () => (await page.getByRole("table", { name: /Operations that need review/ }).locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.querySelector("time")!.getAttribute("datetime")!))).map((t) => Date.parse(t));
  const oldest = await called();
  expect(oldest).toEqual([...oldest].sort((a, b) => a - b));

  await page.getByRole("navigation", { name: "Queue order" }).getByRole("link", { name: "newest call first" }).click();
  await expect(page).toHaveURL(/\/review\?order=newest$/);
  await expect(page.getByRole("table", { name: "Operations that need review, newest call first" })).toBeVisible();
  const newest = await called();
  expect(newest).toEqual([...newest].sort((a, b) => b - a));
  // A filter keeps the order.
  await page.getByRole("navigation", { name: "Queue filters" }).getByRole("link", { name: "divergent" }).click();
  await expect(page).toHaveURL(/outcome=divergent&order=newest/);
  await shot(page, "issue50-review-newest-desktop");

  await page.getByRole("navigation", { name: "Queue filters" }).getByRole("link", { name: "over 24 h old" }).click();
  await expect(page).toHaveURL(/old=true/);
  const old = await called();
  expect(old.length).toBeGreaterThan(0);
  for (const t of old) expect(Date.now() - t).toBeGreaterThan(24 * 3_600_000);

  // ?tab=approvals is the approvals tab; a tab that does not exist says so.
  await page.goto("/review?tab=approvals");
  await expect(page).toHaveURL(/\/review\/approvals$/);
  await page.goto("/review?tab=held");
  await expect(page.getByRole("alert").filter({ hasText: "no tab named" })).toHaveText("Review has no tab named “held”: its tabs are the queue and approvals (above).");
});

test("an approval card shows a text as text, a long one folded, and an edit as a line diff", async ({ page }) => {
  await page.setViewportSize(desktop);
  await signIn(page, demo.viewer.email, demo.viewer.password);
  const id = `held-edit-${Date.now()}`;
  const notes = Array.from({ length: 40 }, (_, i) => `line ${i + 1} of the release notes`).join("\n");
  const approval = { status: "pending", expires_at: new Date(Date.now() + 600_000).toISOString(), rule: "edit_file: always", rule_version: "r1" };
  await ingestAsSignedIn(page, {
    operation_id: id,
    tool: { name: "edit_file" },
    intent: { target: "fs", params: { path: "notes/plan.md", edits: [{ oldText: "# Plan\nship friday\nowner: ana", newText: "# Plan\nship monday\nowner: ana" }], message: "Moves the date.\nAna agreed.", notes } },
    approval,
  });
  await page.goto("/review/approvals");
  const card = page.locator(`article[data-operation="${id}"]`);
  await expect(card.getByRole("heading")).toContainText("edit_file · notes/plan.md");
  // A short text with its line breaks, as text.
  const message = card.getByRole("definition").filter({ hasText: "Moves the date." }).locator("pre");
  await expect(message).toBeVisible();
  expect(await message.textContent()).toBe("Moves the date.\nAna agreed.");
  expect(await message.evaluate((el) => getComputedStyle(el).whiteSpace)).toBe("pre-wrap");
  // A long one folded behind its first line.
  const folded = card.getByRole("definition").filter({ hasText: "line 1 of the release notes" }).locator("details");
  await expect(folded.locator("summary")).toContainText("(40 lines,");
  await expect(folded.locator("pre")).toBeHidden();
  await folded.locator("summary").click();
  await expect(folded.locator("pre")).toContainText("line 40 of the release notes");
  // The edit as a diff: one line out, one in, the rest kept.
  const diff = card.getByRole("figure");
  await expect(diff.locator("figcaption")).toHaveText("edits[0]: −1 +1 lines");
  await expect(diff.locator("pre > span")).toHaveText([/^\s*# Plan$/, /^−\s*removed: ship friday$/, /^\+\s*added: ship monday$/, /^\s*owner: ana$/]);
  await shot(page, "issue50-approval-diff-desktop");
  await noSeriousA11yViolations(page);
  await page.setViewportSize(phone);
  await noSidewaysScroll(page);
  await shot(page, "issue50-approval-diff-phone");
});

test("the demo's example agent holds one call through the demo's gateway: the approvals tab shows it", async ({ browser, baseURL }) => {
  test.setTimeout(60_000);
  const agentPage = await (await browser.newContext()).newPage();
  const token = await agentToken(agentPage);
  const dir = mkdtempSync(path.join(tmpdir(), "e2e-demo-gateway-"));
  const gateway = spawn(process.execPath, ["--import", "tsx", "lib/cli/demo-gateway.ts"], {
    env: { ...process.env, APP_URL: baseURL!, RECONCILE_TOKEN: token, DEMO_GATEWAY_FILE: path.join(dir, "reconcile-gateway.json"), DEMO_GATEWAY_PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let out = "";
      gateway.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("held call sent through")) resolve();
      });
      gateway.once("exit", (code) => reject(new Error(`the demo gateway exited (${code})`)));
    });
    const page = await (await browser.newContext({ viewport: desktop })).newPage();
    await signIn(page, demo.reviewer.email, demo.reviewer.password);
    const card = page.locator("article").filter({ hasText: "by demo-example-agent" }).first();
    await expect(async () => {
      await page.goto("/review/approvals");
      await expect(card).toBeVisible({ timeout: 1000 });
    }).toPass({ timeout: 15_000 });
    await expect(card.getByRole("heading")).toContainText("billing.charge · amount: 480 EUR");
    await expect(card).toContainText("billing.charge: /amount > 100");
    await expect(page.getByRole("navigation", { name: "Review tabs" }).getByRole("link", { name: /approvals \(\d+\)/ })).toHaveAttribute("aria-current", "page");
    await shot(page, "issue50-demo-held-call-desktop");
  } finally {
    gateway.kill("SIGTERM");
  }
});
