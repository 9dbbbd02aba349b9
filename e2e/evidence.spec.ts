import { expect, test } from "@playwright/test";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";

for (const size of ["desktop", "phone"] as const) {
  test(`the deciding evidence is marked in place, both values side by side (${size})`, async ({ page }) => {
    if (size === "phone") await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, demo.viewer.email, demo.viewer.password);

    // The refund whose receipt ran payments.charge, and whose read found a conflicting object.
    await page.goto("/operations/op-billing-7-refund");
    const receipt = page.getByRole("region", { name: "2. Receipt" });
    await expect(receipt.locator("mark")).toHaveText("payments.charge");
    await expect(receipt).toContainText("wrong tool");
    await expect(receipt).toContainText("The operation is for payments.refund");
    const mismatch = page.getByRole("group", { name: "Mismatch: the canonical state conflicts with the intent" });
    await expect(mismatch).toBeVisible();
    const fingerprint = mismatch.getByRole("row", { name: /^fingerprint/ });
    await expect(fingerprint).toContainText("differs");
    await expect(mismatch.getByRole("row", { name: /^target/ })).toContainText("order 5531");
    await expect(mismatch.getByRole("row", { name: /^target/ })).toContainText("ch_5531");
    await expect(mismatch.getByRole("row", { name: /^target/ })).not.toContainText("differs");
    await shot(page, `evidence-wrong-tool-mismatch-${size}`);
    await noSeriousA11yViolations(page);

    // A match whose object carries another fingerprint than the intent's.
    await page.goto("/operations/op-billing-7-fingerprint");
    const differs = page.getByRole("group", { name: "The object found is not the one intended: its fingerprint differs" });
    await expect(differs.getByRole("row", { name: /^fingerprint/ })).toContainText("differs");
    await expect(page.getByRole("region", { name: "2. Receipt" }).locator("mark")).toHaveCount(0);

    // A verified operation marks nothing.
    await page.goto("/operations/op-billing-7-ledger-post");
    await expect(page.locator("main mark")).toHaveCount(0);
    await expect(page.getByRole("group", { name: /Mismatch|fingerprint differs/ })).toHaveCount(0);
  });
}
