import { expect, test } from "@playwright/test";
import { demo, ingestAsSignedIn, noSeriousA11yViolations, shot, signIn } from "./helpers";

for (const size of ["desktop", "phone"] as const) {
  test(`reviewers hand an operation over with notes, kept in order with the corrections (${size})`, async ({ page, browser }) => {
    if (size === "phone") await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, demo.reviewer.email, demo.reviewer.password);
    const id = `op-e2e-notes-${Date.now()}-${size}`;
    await ingestAsSignedIn(page, { operation_id: id, tool: { name: "payments.refund" }, receipt: { status: "accepted", observed_at: new Date(Date.now() - 60_000).toISOString() } });
    await page.goto(`/operations/${id}`);
    const history = page.locator("section", { has: page.getByRole("heading", { name: "Corrections and notes" }) });
    const add = page.getByRole("button", { name: "Add note" });
    await expect(add).toBeDisabled();
    // Ctrl+Enter sends from the text box.
    await page.getByLabel("Add a note").fill("Asked the payments team; they will check the ledger by 15:00 UTC.");
    await page.getByLabel("Add a note").press("Control+Enter");
    await expect(history.getByRole("listitem").first()).toContainText("Asked the payments team");
    await expect(history.getByRole("listitem").first()).toContainText(`by ${demo.reviewer.email}`);
    await expect(page.getByRole("status").filter({ hasText: "Note added." })).toBeVisible();
    await expect(page.getByLabel("Add a note")).toHaveValue("");

    await page.getByRole("button", { name: "Resolve" }).click();
    await page.getByLabel("not applied — the effect is absent").check();
    await page.getByLabel("Reason").fill("The ledger shows no refund.");
    await page.getByRole("button", { name: "Confirm resolve" }).click();
    await expect(history.getByRole("listitem")).toHaveCount(2);
    await page.getByLabel("Add a note").fill("Told the customer; a new refund goes out tomorrow.");
    await add.click();
    await expect(history.getByRole("listitem")).toHaveCount(3);
    await expect(history.getByRole("listitem").nth(0)).toContainText("Note");
    await expect(history.getByRole("listitem").nth(1)).toContainText("The ledger shows no refund.");
    await expect(history.getByRole("listitem").nth(2)).toContainText("Told the customer");
    await shot(page, `notes-${size}`);
    await noSeriousA11yViolations(page);

    // A viewer reads the notes and has no form.
    const context = await browser.newContext(size === "phone" ? { viewport: { width: 390, height: 844 } } : {});
    const viewer = await context.newPage();
    await signIn(viewer, demo.viewer.email, demo.viewer.password);
    await viewer.goto(`/operations/${id}`);
    await expect(viewer.getByText("Told the customer; a new refund goes out tomorrow.")).toBeVisible();
    await expect(viewer.getByLabel("Add a note")).toHaveCount(0);
    await context.close();
  });
}
