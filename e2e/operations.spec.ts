import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";



test.beforeEach(async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
});

test("the essay's X post reads as divergent, says why, and blocks the retry", async ({ page }) => {
  await page.goto("/operations?q=op-2026-08-28-x-post-001");
  // The row and the page lead with what happened: the tool and its target; the id beneath, whole (it is short).
  await page.getByRole("link", { name: /^social\.publish · social account \(X\)\s*op-2026-08-28-x-post-001$/ }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("social.publish · social account (X)");
  await expect(page).toHaveTitle(/^social\.publish · social account \(X\) \(op-2026-08-28-x-post-001\)/);
  await expect(page.getByRole("button", { name: "Copy the id op-2026-08-28-x-post-001" })).toBeVisible();
  const outcome = page.getByRole("region", { name: "5. Outcome" });
  await expect(outcome).toContainText("divergent");
  await expect(outcome).toContainText("the write was accepted but the canonical effect is absent");
  await expect(outcome).toContainText("4 · success signal without effect");
  await expect(outcome).toContainText("Blocked until canonical state is reconciled. Automatic retry: never.");
  await expect(outcome).toContainText("overclaimed success");
  const reads = page.getByRole("region", { name: "3. Canonical read" });
  await expect(reads.getByText("deciding read")).toHaveCount(1);
  await expect(reads).toContainText("absent");
  await expect(page.getByRole("region", { name: "4. Side effects" })).toContainText("daily post ceiling decremented");
  await page.getByRole("region", { name: "2. Receipt" }).getByText("raw JSON").click();
  await expect(page.getByRole("region", { name: "2. Receipt" }).locator("pre")).toContainText('"receipt_id": "gw-x-20260828-7731"');
  await shot(page, "operation");
  await noSeriousA11yViolations(page);
});

test("filters live in the URL and survive a reload; pages go older and back", async ({ page }) => {
  await page.goto("/operations");
  await expect(page.getByRole("table")).toBeVisible();
  await page.getByLabel("Effective outcome").selectOption("divergent");
  await page.getByLabel("Needs review").selectOption("true");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(/outcome=divergent/);
  await expect(page).toHaveURL(/needs_review=true/);
  const rows = page.getByRole("row");
  await expect(rows.nth(1)).toContainText("divergent");
  await page.reload();
  await expect(page.getByLabel("Effective outcome")).toHaveValue("divergent");
  const badges = await page.locator("tbody tr td:nth-child(2) span").allTextContents();
  expect(badges.length).toBeGreaterThan(0);
  expect(new Set(badges)).toEqual(new Set(["divergent"]));
  await shot(page, "operations");
  await noSeriousA11yViolations(page);

  // Clear, and Back, put the form's fields where the URL is: a later search adds no stale filter.
  await page.getByRole("link", { name: "Clear" }).click();
  await expect(page).toHaveURL(/\/operations$/);
  await expect(page.getByLabel("Effective outcome")).toHaveValue("");
  await expect(page.getByLabel("Needs review")).toHaveValue("");
  await page.goBack();
  await expect(page).toHaveURL(/outcome=divergent/);
  await expect(page.getByLabel("Effective outcome")).toHaveValue("divergent");
  await page.goBack();
  await expect(page.getByLabel("Effective outcome")).toHaveValue("");

  await page.goto("/operations?limit=20");
  await page.getByRole("link", { name: "Older →" }).click();
  await expect(page).toHaveURL(/cursor=\d+/);
  await expect(page.getByRole("link", { name: "Newest", exact: true })).toBeVisible();

  await page.goto("/operations?q=no-such-operation-anywhere");
  await expect(page.getByText("No operation matches these filters.")).toBeVisible();
  await page.goto("/operations?outcome=maybe");
  await expect(page.getByRole("alert").filter({ hasText: "These filters are not valid" })).toBeVisible();
});

test("new operations arrive as a notice, not a jumping list", async ({ page }) => {
  await page.goto("/operations");
  const first = await page.locator("tbody tr").first().textContent();
  const res = await page.request.post("/api/v1/receipts", {
    headers: { origin: new URL(page.url()).origin },
    data: { operation_id: `op-e2e-new-${Date.now()}`, receipt: { status: "accepted", observed_at: "2026-11-30T10:00:00Z" } },
  });
  expect(res.status()).toBe(201);
  await expect(page.getByRole("status").filter({ hasText: "1 new operation since this page loaded" })).toBeVisible({ timeout: 15_000 });
  expect(await page.locator("tbody tr").first().textContent()).toBe(first);
  await page.getByRole("button", { name: "Show" }).click();
  await expect(page.locator("tbody tr").first()).toContainText("op-e2e-new-");
});

test("a trajectory shows where it went wrong and what that tainted", async ({ page }) => {
  await page.goto("/trajectories");
  // The list counts the tainted steps: notify, upload and generate rest on the unverified account.
  await expect(page.getByRole("row", { name: /crm-onboarding-42/ }).getByRole("cell").nth(3)).toHaveText("3");
  await page.getByRole("link", { name: "crm-onboarding-42" }).click();
  await expect(page.getByText("3 steps rest on an unverified premise.")).toBeVisible();
  // Each step says what it acted on and meant to do; "depends on" ids are links to the step.
  const create = page.locator("#step-op-crm-42-create-account");
  await expect(create).toContainText("Targetaccounts table (production)");
  await expect(create).toContainText("Intended effectcreate the customer account");
  const upload = page.locator("#step-op-crm-42-upload-contract");
  await upload.getByRole("link", { name: "op-crm-42-generate-contract" }).click();
  await expect(page).toHaveURL(/#step-op-crm-42-generate-contract$/);
  // The trajectory's own audit records, for export.
  const download = page.waitForEvent("download");
  await page.getByRole("link", { name: "Export this trajectory's audit records (NDJSON)" }).click();
  const lines = (await (await download).createReadStream()).toArray();
  const text = Buffer.concat((await lines) as Buffer[]).toString();
  expect(text).toContain("op-crm-42-notify");
  expect(text).not.toContain("op-billing-7-refund");
  const wrong = page.locator('li[aria-current="step"]');
  await expect(wrong).toContainText("op-crm-42-create-account");
  await expect(wrong).toContainText("The first unverified step that later steps relied on.");
  await expect(page.getByRole("listitem").filter({ hasText: "op-crm-42-notify" })).toContainText("Built on an unverified premise");
  await shot(page, "trajectory");
  await noSeriousA11yViolations(page);

  await page.locator("#step-op-crm-42-generate-contract").getByRole("link", { name: "op-crm-42-generate-contract" }).click();
  await expect(page.getByRole("note")).toContainText("Built on an unverified premise");
  await expect(page.getByRole("region", { name: "Relied on (upstream)" }).or(page.locator("section", { hasText: "Relied on (upstream)" }))).toContainText("op-crm-42-create-account");
});

test("an unknown operation or trajectory is a 404 that says what was looked for and where to look", async ({ page }) => {
  const res = await page.goto("/operations/op-no-such-operation");
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "No operation op-no-such-operation" })).toBeVisible();
  await shot(page, "missing-operation");
  await page.getByRole("link", { name: "Search the operations for “op-no-such-operation”" }).click();
  await expect(page).toHaveURL(/\/operations\?q=op-no-such-operation$/);
  await expect(page.getByLabel("Search")).toHaveValue("op-no-such-operation");

  expect((await page.goto("/trajectories/no-such-run"))?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "No trajectory no-such-run" })).toBeVisible();
});

test("markup inside a receipt renders as text and never runs", async ({ page, browser }) => {
  const id = `op-e2e-xss-${Date.now()}`;
  const payload = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;
  // The record carries a canonical read: a viewer may not send one (TRUST.md), a reviewer may.
  const reviewer = await browser.newPage();
  await signIn(reviewer, demo.reviewer.email, demo.reviewer.password);
  const res = await reviewer.request.post("/api/v1/receipts", {
    headers: { origin: new URL(reviewer.url()).origin },
    data: {
      operation_id: id,
      intent: { target: payload, effect: payload, params: { text: payload } },
      receipt: { status: "accepted", receipt_id: payload, observed_at: "2026-11-30T10:00:00Z", environment: { endpoint: payload } },
      canonical_read: { status: "match", observed_at: "2026-11-30T10:01:00Z", evidence: payload, reader: { identity: payload } },
      side_effects: [{ name: payload, status: "observed" }],
    },
  });
  expect(res.status()).toBe(201);
  await page.goto(`/operations/${id}`);
  await expect(page.getByRole("region", { name: "1. Intent" })).toContainText("<script>window.__pwned = 1</script>");
  await expect(page.getByRole("region", { name: "4. Side effects" })).toContainText('onerror="window.__pwned = 2"');
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  expect(await page.locator("img[src=x]").count()).toBe(0);
});

test("the overview's numbers, chart and rankings each lead to the filtered list", async ({ page }) => {
  await page.goto("/?period=90d");
  await expect(page.getByRole("img", { name: /Silent-failure rate per day/ })).toBeVisible();
  await expect(page.locator(".recharts-bar-rectangle").first()).toBeVisible();
  await shot(page, "overview");
  await noSeriousA11yViolations(page);
  const divergent = page.getByRole("list", { name: "Operations by effective outcome" }).getByRole("link", { name: /divergent/ });
  const n = Number((await divergent.textContent())!.replace(/\D/g, ""));
  expect(n).toBeGreaterThan(0);
  await divergent.click();
  await expect(page).toHaveURL(/\/operations\?outcome=divergent&called_since=/);
  await expect(page.getByLabel("Effective outcome")).toHaveValue("divergent");
  await page.goto("/?period=90d");
  await page.getByRole("link", { name: "overclaimed successes" }).click();
  await expect(page).toHaveURL(/\/review\?overclaimed=true/);
  await page.goto("/?period=90d");
  await page.getByRole("region", { name: "Tools by divergence" }).or(page.locator("section", { has: page.getByRole("heading", { name: "Tools by divergence" }) })).getByRole("link").first().click();
  await expect(page).toHaveURL(/tool=.*outcome=divergent/);
});

test("an operation that arrived as an OpenTelemetry span shows its trace, span and attributes, on a desktop and a phone", async ({ page }) => {
  const fixture = JSON.parse(readFileSync("lib/otlp/fixtures/gen-ai.json", "utf8"));
  const traceId = randomUUID().replace(/-/g, "");
  for (const span of fixture.resourceSpans[0].scopeSpans[0].spans) span.traceId = traceId;
  const res = await page.request.post("/api/v1/otlp/v1/traces", { headers: { origin: new URL(page.url()).origin }, data: fixture });
  expect(res.status()).toBe(200);
  expect(await res.json()).toEqual({});

  await page.goto(`/operations/${encodeURIComponent(`otel:${traceId}:call_refund_1`)}`);
  const intent = page.getByRole("region", { name: "1. Intent" });
  await expect(intent).toContainText("execute_tool refund_order (gen_ai)");
  await expect(intent).toContainText(traceId);
  await expect(intent).toContainText("eee19b7ec3c1b176");
  // The arguments and the tool's answer read as text, without a click.
  await expect(intent.getByRole("definition").filter({ hasText: "5531" }).first()).toBeVisible();
  const receipt = page.getByRole("region", { name: "2. Receipt" });
  await expect(receipt.getByRole("heading", { name: "What the tool answered" })).toBeVisible();
  await expect(receipt.getByRole("definition").filter({ hasText: "rf_881" }).first()).toBeVisible();
  // The span's start is the intent's observed time, as the API says.
  await expect(intent).not.toContainText("the intent names no time");
  await intent.getByText("span attributes (raw)").click();
  await expect(intent.locator("details", { hasText: "span attributes (raw)" }).locator("pre")).toContainText('"gen_ai.tool.call.id": "call_refund_1"');
  await shot(page, "operation-otel");
  await noSeriousA11yViolations(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "operation-otel-phone");
});
