import { expect, test } from "@playwright/test";
import { demo, ingestAsSignedIn, noSeriousA11yViolations, shot, signIn } from "./helpers";

/** Free-text search on the demo data (issue 19): what the page says finds the operation, marked. */
for (const size of ["desktop", "phone"] as const) {
  test(`search finds an operation by what its page says and marks the matching words (${size})`, async ({ page }) => {
    if (size === "phone") await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, demo.viewer.email, demo.viewer.password);
    await page.goto("/operations");
    const form = page.getByRole("form", { name: "Filter operations" });

    // A word of the tool and the effect (other specs add refunds to the same demo: find its row).
    // A row leads with what happened and ends with its id (issue 50); its copy button names the id whole.
    const rowOf = (id: string) => page.locator("tbody tr").filter({ has: page.getByRole("button", { name: `Copy the id ${id}`, exact: true }) });
    const listedIds = async () => (await page.locator("tbody tr").getByRole("button", { name: /^Copy the id / }).evaluateAll((bs) => bs.map((b) => b.getAttribute("aria-label")!))).map((l) => l.replace(/^Copy the id /, ""));
    await form.getByLabel("Search").fill("refund");
    await form.getByRole("button", { name: "Apply filters" }).click();
    await expect(page).toHaveURL(/\/operations\?q=refund$/);
    await expect(page.locator("table caption")).toHaveText("Operations matching “refund”, best match first");
    const refund = rowOf("op-billing-7-refund");
    await expect(refund.locator("mark").first()).toHaveText("refund");
    const where = refund.getByRole("list", { name: "Where it matched" });
    await expect(where).toContainText("tool: payments.refund");
    await expect(where.locator("mark").first()).toHaveText("refund");
    // A match in the tool and effect ranks above one in the effect alone.
    const ids = await listedIds();
    expect(ids.indexOf("op-billing-7-refund")).toBeLessThan(ids.indexOf("op-billing-7-ledger-post"));
    expect(ids.length).toBeGreaterThan(3);
    await shot(page, `search-refund-${size}`);
    await noSeriousA11yViolations(page);

    // A number from the target and the params: only that operation, and where it was found.
    await form.getByLabel("Search").fill("5531");
    await form.getByRole("button", { name: "Apply filters" }).click();
    await expect(page).toHaveURL(/\/operations\?q=5531$/);
    const row = rowOf("op-billing-7-refund");
    await expect(row.getByRole("list", { name: "Where it matched" }).getByRole("listitem").first()).toHaveText("target: order 5531");
    // Marked where it matched, and in the row's headline (payments.refund · order 5531 · amount: 20.00).
    await expect(row.getByRole("link")).toContainText("payments.refund · order 5531 · amount: 20.00");
    await expect(row.locator("mark")).toHaveText(["5531", "5531", "5531"]);
    await shot(page, `search-5531-${size}`);
    await noSeriousA11yViolations(page);

    // FTS syntax is only text: no error, just no match.
    await page.goto(`/operations?q=${encodeURIComponent('"NEAR(* OR -refund:')}`);
    await expect(page.getByText("No operation matches these filters.")).toBeVisible();
    await expect(page.getByText(/not valid/)).toHaveCount(0);
  });
}

test("a search's new-operations notice counts only matches that arrived after the page loaded", async ({ page }) => {
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  const word = `zebra${Date.now()}`;
  await ingestAsSignedIn(page, { operation_id: `op-e2e-search-old-${Date.now()}`, tool: { name: "payments.refund" }, intent: { target: `order ${word}` } });
  // Ranked, the best match is not the newest: nothing is new yet, whatever the order.
  await page.goto(`/operations?q=refund`);
  await expect(page.getByRole("button", { name: "Copy the id op-billing-7-refund", exact: true })).toBeVisible();
  await page.waitForTimeout(6_000); // one poll
  await expect(page.getByRole("status").filter({ hasText: "since this page loaded" })).toHaveCount(0);
  await ingestAsSignedIn(page, { operation_id: `op-e2e-search-new-${Date.now()}`, tool: { name: "payments.refund" }, intent: { target: "order 1" } });
  await expect(page.getByRole("status").filter({ hasText: "1 new operation since this page loaded" })).toBeVisible({ timeout: 15_000 });
});
