import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { demo, signIn } from "./helpers";

test("an admin downloads an NDJSON export from the audit page and it verifies", async ({ page }, info) => {
  await signIn(page, demo.admin.email, demo.admin.password);
  await page.getByRole("link", { name: "Audit" }).click();
  await expect(page.getByRole("heading", { name: "Audit trail" })).toBeVisible();
  await expect(page.getByText(/^ed25519:/)).toBeVisible();
  // Server health, for whoever is on call: ready, the chain's head, the checkpoint's age, job lag.
  const health = page.getByRole("region", { name: "Server health" });
  await expect(health.getByTestId("readiness")).toHaveText(/^ready/);
  await expect(health.getByTestId("chain-head")).toHaveText(/seq [\d,]+/);
  await expect(health.getByTestId("checkpoint-age")).toHaveText(/^(\d+ (s|min)|\d+ h \d+ min|\d+ d \d+ h) since the last one$/);
  await expect(health.getByTestId("job-lag")).toHaveText(/^(none: no job is waiting past its time|.+ due, the oldest waiting .+)$/);
  const fingerprint = (await page.getByTestId("key-fingerprint").textContent()) ?? "";
  expect(fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
  await page.getByText("the public key as PEM, to pin it").click();
  const pem = info.outputPath("public.pem");
  writeFileSync(pem, (await page.locator("pre").filter({ hasText: "BEGIN PUBLIC KEY" }).textContent()) ?? "");
  await page.getByRole("button", { name: "Verify the chain now" }).click();
  await expect(page.getByRole("status").filter({ hasText: /Intact: all [\d,]+ records link, up to seq \d+; (1 checkpoint matches|\d+ checkpoints match)\./ })).toBeVisible();
  await page.screenshot({ path: "test-results/screenshots/audit.png", fullPage: true });

  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export" }).click();
  const file = info.outputPath("export.ndjson");
  await (await download).saveAs(file);
  await expect(page.getByRole("status").filter({ hasText: /^Saved reconcile-audit-/ })).toBeVisible();

  // Pinned to the key the page shows: the CLI names the same fingerprint.
  const verify = spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "--conditions=react-server", "lib/cli/index.ts", "audit:verify", "--file", file, "--key", pem], { encoding: "utf8" });
  expect(verify.stdout).toMatch(/chain intact: \d+ records/);
  expect(verify.stdout).toContain(`signatures checked against the pinned key ${fingerprint}`);
  expect(verify.stdout).toContain(`by key ${fingerprint}): matches`);
  expect(verify.status).toBe(0);
});

test("a viewer may export too, but a bad filter reads clearly", async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
  await page.goto("/audit");
  await page.getByLabel("Recorded since").fill("last tuesday");
  await page.getByRole("button", { name: "Export" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "since must be an RFC 3339 date-time" })).toBeVisible();
});

test("a project's admin sets its retention on the audit page; a viewer reads it and has no form", async ({ page, browser }) => {
  await signIn(page, demo.admin.email, demo.admin.password);
  await page.goto("/audit");
  const panel = page.getByRole("region", { name: "Retention and archive" });
  await expect(panel).toContainText("Retention is off: every record of this project stays in the database for good.");
  const days = panel.getByLabel("Keep records for (days)");
  await expect(days).toHaveValue("");
  // Days no demo record is old enough for: nothing is sealed, the setting is what is shown.
  await days.fill("36500");
  await days.press("Enter");
  await expect(panel.locator("[aria-live]").filter({ hasText: "keeps 36,500 days now." })).toBeVisible();
  await expect(panel).toContainText("Retention is on for this project (its own setting): each day, records older than 36,500 whole days are sealed into");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: "test-results/screenshots/retention-phone.png", fullPage: true });
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.screenshot({ path: "test-results/screenshots/retention-desktop.png", fullPage: true });

  const viewer = await (await browser.newContext()).newPage();
  await signIn(viewer, demo.viewer.email, demo.viewer.password);
  await viewer.goto("/audit");
  const seen = viewer.getByRole("region", { name: "Retention and archive" });
  await expect(seen).toContainText("older than 36,500 whole days");
  await expect(seen.getByLabel("Keep records for (days)")).toHaveCount(0);
  await viewer.context().close();

  // Back to the server's default (none here): off again.
  await days.fill("");
  await panel.getByRole("button", { name: "Save retention" }).click();
  await expect(panel.locator("[aria-live]").filter({ hasText: "follows the server's default now." })).toBeVisible();
  await expect(panel).toContainText("Retention is off");
});
