import { expect, test, type Page } from "@playwright/test";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";

const numberIn = (text: string | null) => Number(text!.replace(/[^\d]/g, ""));

/** Counts every operation the list shows, page by page. */
async function countListed(page: Page): Promise<number> {
  await page.goto(`${page.url()}&limit=200`);
  let n = 0;
  for (;;) {
    n += await page.locator("tbody tr").count();
    const older = page.getByRole("link", { name: "Older →" });
    if (!(await older.count())) return n;
    await older.click();
    await expect(page.getByRole("link", { name: "Newest", exact: true })).toBeVisible();
  }
}

for (const size of ["desktop", "phone"] as const) {
  test(`the metrics page: five figures with n and intervals, a weekly trend, and every number opens its operations (${size})`, async ({ page }) => {
    await signIn(page, demo.viewer.email, demo.viewer.password);
    if (size === "phone") await page.setViewportSize({ width: 390, height: 844 });
    if (size === "desktop") {
      await page.getByRole("navigation").getByRole("link", { name: "Metrics" }).click();
      await expect(page.getByRole("heading", { name: "Metrics", level: 1 })).toBeVisible();
    }
    await page.goto("/metrics?period=all");
    await expect(page.getByRole("heading", { name: "Metrics", level: 1 })).toBeVisible();
    for (const title of ["Grounding accuracy", "Silent failure rate", "Verification precision", "Verification recall", "Recovery rate"]) {
      await expect(page.getByRole("heading", { name: new RegExp(title) })).toBeVisible();
    }
    await expect(page.getByText(/95 % interval/).first()).toBeVisible();
    await expect(page.getByRole("table", { name: /Per week/ })).toBeVisible();
    await shot(page, `metrics-${size}`);
    await noSeriousA11yViolations(page);

    // Metric 2's n: accepted receipts with a known effect; the link lists exactly them.
    const card = page.getByRole("listitem").filter({ has: page.getByRole("heading", { name: /Silent failure rate/ }) });
    const n = card.getByRole("link").nth(2);
    const count = numberIn(await n.textContent());
    expect(count).toBeGreaterThan(0);
    await n.click();
    await expect(page).toHaveURL(/metric=silent_failure_rate&part=n/);
    await expect(page.getByRole("link", { name: /Remove filter Metric: silent failure rate \(n\)/ })).toBeVisible();
    expect(await countListed(page)).toBe(count);
  });
}

test("an admin sets a tool's audit sampling rate; a viewer cannot", async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
  await page.goto("/metrics");
  await expect(page.getByRole("form", { name: "Set a sampling rate" })).toHaveCount(0);
  await page.context().clearCookies();
  await signIn(page, demo.admin.email, demo.admin.password);
  await page.goto("/metrics");
  const form = page.getByRole("form", { name: "Set a sampling rate" });
  await form.getByLabel("Tool").fill("social.publish");
  await form.getByLabel("Percent of verified operations").fill("2.5");
  await form.getByRole("button", { name: "Set rate" }).click();
  await expect(page.getByText(/Sampling 2.5 % of social.publish's verified operations/)).toBeVisible();
  await expect(page.getByRole("link", { name: "social.publish" })).toBeVisible();
  await noSeriousA11yViolations(page);
  // Back to no sampling, for the other tests.
  await form.getByLabel("Tool").fill("social.publish");
  await form.getByLabel("Percent of verified operations").fill("0");
  await form.getByRole("button", { name: "Set rate" }).click();
  await expect(page.getByText(/Stopped sampling social.publish/)).toBeVisible();
});
