import { expect, test, type Page } from "@playwright/test";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";

const phone = { width: 390, height: 844 };


/** The operation ids of the rows on screen, top to bottom. */
const rowIds = (page: Page) => page.locator("tbody tr td:first-child a").allTextContents();

test.beforeEach(async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
});

for (const size of ["desktop", "phone"] as const) {
  test(`the main filters sit in one row, the rest behind More filters, active ones as chips, no empty field in the URL (${size})`, async ({ page }) => {
    if (size === "phone") await page.setViewportSize(phone);
    await page.goto("/operations");
    const form = page.getByRole("form", { name: "Filter operations" });
    await expect(form.getByLabel("Search")).toBeVisible();
    await expect(form.getByLabel("Effective outcome")).toBeVisible();
    await expect(form.getByLabel("Tool")).toBeVisible();
    await expect(form.getByLabel("Needs review")).toBeVisible();
    await expect(form.getByLabel("Target")).toBeHidden();
    await expect(page.getByRole("list", { name: "Active filters" })).toHaveCount(0);
    // The first row of the list is on the first screen, even on a phone.
    const firstRow = await page.locator("tbody tr").first().boundingBox();
    expect(firstRow!.y).toBeLessThan(page.viewportSize()!.height);
    if (size === "desktop") {
      const tops = await Promise.all(["Search", "Effective outcome", "Tool", "Needs review"].map(async (l) => (await form.getByLabel(l).boundingBox())!.y));
      expect(Math.max(...tops) - Math.min(...tops)).toBeLessThan(8);
    }
    await shot(page, `operations-filters-${size}`);

    await form.getByLabel("Effective outcome").selectOption("divergent");
    await form.getByRole("button", { name: "Apply filters" }).click();
    await expect(page).toHaveURL(/\/operations\?outcome=divergent$/);
    await expect(page.getByRole("link", { name: "Remove filter Outcome: divergent" })).toBeVisible();

    await form.getByText("More filters").click();
    await form.getByLabel("Failure category").selectOption("4");
    await form.getByRole("button", { name: "Apply filters" }).click();
    await expect(page).toHaveURL(/\/operations\?outcome=divergent&failure_category=4$/);
    // A filter behind "More filters" is set, so it opens by itself and shows it.
    await page.reload();
    await expect(form.getByLabel("Failure category")).toBeVisible();
    await expect(form.getByLabel("Failure category")).toHaveValue("4");
    const chips = page.getByRole("list", { name: "Active filters" });
    await expect(chips.getByRole("link")).toHaveText([/Outcome: divergent/, /Failure category: 4/]);
    await shot(page, `operations-chips-${size}`);
    await noSeriousA11yViolations(page);

    // Each chip removes its own filter, from the keyboard too.
    await chips.getByRole("link", { name: "Remove filter Outcome: divergent" }).focus();
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/\/operations\?failure_category=4$/);
    await expect(form.getByLabel("Effective outcome")).toHaveValue("");
    await chips.getByRole("link", { name: "Remove filter Failure category: 4" }).click();
    await expect(page).toHaveURL(/\/operations$/);
    await expect(form.getByLabel("Target")).toBeHidden();

    // A hand-made URL with empty fields lands on the same list without them.
    await page.goto("/operations?q=&outcome=divergent&tool=&agent=&since=");
    await expect(page).toHaveURL(/\/operations\?outcome=divergent$/);
  });
}

test("a date filter typed as a plain day means that day's start in UTC; a long search stays inside a phone's width", async ({ page }) => {
  await page.goto("/operations");
  const form = page.getByRole("form", { name: "Filter operations" });
  await form.getByText("More filters").click();
  await form.getByLabel("Recorded since").fill("2026-08-28");
  await form.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(/\/operations\?since=2026-08-28T00%3A00%3A00Z$/);
  await expect(page.getByText("These filters are not valid")).toHaveCount(0);
  await expect(page.getByRole("list", { name: "Active filters" })).toContainText("Recorded since: 2026-08-28T00:00:00Z");
  // Not a calendar day: refused by the filters' check, as before.
  await page.goto("/operations?since=2026-02-30");
  await expect(page.getByText("These filters are not valid")).toBeVisible();

  await page.setViewportSize(phone);
  await page.goto(`/operations?q=${"refund ".repeat(28).trim()}`);
  const chip = page.getByRole("link", { name: /Remove filter Search:/ });
  await expect(chip).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(phone.width);
  const box = (await chip.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(phone.width);
  await expect(page.getByRole("searchbox", { name: "Search" })).toHaveAttribute("maxlength", "200");
});

test("pages go Older, Newer and back to Newest, each showing the operations just beside the last", async ({ page }) => {
  // The list renders on the client: after a click the URL can change before the rows do, so
  // every check of the rows waits for them (toHaveText retries) instead of reading them once.
  const ids = page.locator("tbody tr td:first-child a");
  await page.goto("/operations?limit=5");
  const first = await rowIds(page);
  expect(first).toHaveLength(5);
  await expect(page.getByRole("link", { name: "← Newer" })).toHaveCount(0);
  await page.getByRole("link", { name: "Older →" }).click();
  await expect(page).toHaveURL(/cursor=\d+/);
  await expect(ids.first()).not.toHaveText(first[0]);
  const second = await rowIds(page);
  expect(second.some((id) => first.includes(id))).toBe(false);
  await page.getByRole("link", { name: "Older →" }).click();
  await expect(ids.first()).not.toHaveText(second[0]);
  const third = await rowIds(page);
  expect(third).toHaveLength(5);
  expect(third.some((id) => second.includes(id) || first.includes(id))).toBe(false);

  await page.getByRole("link", { name: "← Newer" }).click();
  await expect(ids).toHaveText(second);
  await expect(page).toHaveURL(/limit=5/);
  await page.getByRole("link", { name: "← Newer" }).click();
  await expect(page).toHaveURL(/\/operations\?limit=5$/);
  await expect(ids).toHaveText(first);
  await expect(page.getByRole("link", { name: "← Newer" })).toHaveCount(0);

  await page.getByRole("link", { name: "Older →" }).click();
  await expect(ids).toHaveText(second);
  await page.getByRole("link", { name: "Older →" }).click();
  await expect(ids).toHaveText(third);
  await page.getByRole("link", { name: "Newest", exact: true }).click();
  await expect(page).toHaveURL(/\/operations\?limit=5$/);
  await expect(ids).toHaveText(first);
});
