import { expect, test, type Page } from "@playwright/test";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";



const numberIn = (text: string | null) => Number(text!.replace(/[^\d]/g, ""));

/** Follows a link from the overview and counts every operation the list shows, page by page. */
async function countListed(page: Page, link: ReturnType<Page["getByRole"]>): Promise<number> {
  await link.click();
  await expect(page).toHaveURL(/\/operations\?/);
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

test.beforeEach(async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
});

for (const size of ["desktop", "phone"] as const) {
  test(`the overview says which clock each number uses, and each number opens exactly its operations (${size})`, async ({ page }) => {
    if (size === "phone") await page.setViewportSize({ width: 390, height: 844 });
    await page.goto("/?period=90d");
    await expect(page.getByText("the silent-failure rate goes by the day of the call")).toBeVisible();
    await expect(page.getByText(/counted by the day of the call \(the receipt's own time, not when it was recorded here\)/)).toBeVisible();
    await shot(page, `overview-${size}`);
    await noSeriousA11yViolations(page);

    const silentLink = page.getByRole("link", { name: /silent failures$/ });
    const acceptedLink = page.getByRole("link", { name: /accepted receipts$/ });
    const silent = numberIn(await silentLink.textContent());
    const accepted = numberIn(await acceptedLink.textContent());
    expect(accepted).toBeGreaterThan(0);
    expect(await countListed(page, silentLink)).toBe(silent);
    await expect(page).toHaveURL(/silent_failure=true&called_since=/);
    await page.goto("/?period=90d");
    expect(await countListed(page, acceptedLink)).toBe(accepted);
    await expect(page).toHaveURL(/receipt_status=accepted&called_since=/);
    await expect(page.getByRole("link", { name: "Remove filter Receipt: accepted" })).toBeVisible();
    await expect(page.getByRole("link", { name: /Remove filter Called since:/ })).toBeVisible();

    // The cards count by the recorded clock, and open that same list.
    await page.goto("/?period=90d");
    const divergent = page.getByRole("list", { name: "Operations by effective outcome" }).getByRole("link", { name: /divergent/ });
    const n = numberIn(await divergent.textContent());
    expect(n).toBeGreaterThan(0);
    expect(await countListed(page, divergent)).toBe(n);
    await expect(page).toHaveURL(/outcome=divergent&since=/);
  });
}
