import { expect, test } from "@playwright/test";
import { demo, ingestAsSignedIn, noSeriousA11yViolations, shot, signIn } from "./helpers";

for (const size of ["desktop", "phone"] as const) {
  test(`a refund refused while the agent said "success" is resolved as not applied and its claim recorded as false in one act (${size})`, async ({ page }) => {
    if (size === "phone") await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, demo.reviewer.email, demo.reviewer.password);
    const id = `op-e2e-false-claim-${Date.now()}-${size}`;
    await ingestAsSignedIn(page, {
      operation_id: id,
      tool: { name: "payments.refund" },
      claimed_outcome: "success",
      intent: { effect: "refund order 5531", target: "order 5531" },
      receipt: { status: "rejected", observed_at: new Date(Date.now() - 5 * 60_000).toISOString(), error: "card expired" },
    });

    // The queue counts it and lists it under its own tab.
    await page.goto("/review");
    await expect(page.getByRole("main")).toContainText(/rejected whose agent claimed success anyway/);
    await page.getByRole("navigation", { name: "Queue filters" }).getByRole("link", { name: "rejected, success claimed" }).click();
    await expect(page).toHaveURL(/outcome=rejected/);
    await expect(page.getByRole("main")).toContainText(id);
    await noSeriousA11yViolations(page);

    await page.goto(`/operations/${id}`);
    await page.getByRole("button", { name: "Resolve" }).click();
    const withdraw = page.getByRole("checkbox", { name: /record that claim as false/ });
    await page.getByLabel("not applied — the effect is absent").check();
    // Not applied: the claim was false, unless the reviewer says otherwise.
    await expect(withdraw).toBeChecked();
    await expect(page.getByRole("status").filter({ hasText: "Outcome:" })).toContainText("rejected → not applied");
    await expect(page.getByRole("status").filter({ hasText: "Outcome:" })).toContainText("The agent's success claim is recorded as false.");
    // Verified would mean the claim held: the box cannot be ticked then.
    await page.getByLabel("verified — the effect is there").check();
    await expect(withdraw).toBeDisabled();
    await expect(withdraw).not.toBeChecked();
    await page.getByLabel("not applied — the effect is absent").check();
    await expect(withdraw).toBeChecked();
    await page.getByLabel("Reason").fill("The bank refused the refund; the customer was told it went out.");
    await shot(page, `false-claim-form-${size}`);
    await noSeriousA11yViolations(page);
    await page.getByRole("button", { name: "Confirm resolve" }).click();

    // The page leads with what happened, and says what a reviewer did in the block at its top.
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("payments.refund · order 5531");
    const header = page.getByRole("region", { name: "Outcome and review" });
    await expect(header).toContainText(/resolved as not applied by .+ UTC, the agent's success claim withdrawn \(was: rejected — /);
    await expect(page.getByRole("main")).toContainText("a reviewer recorded that claim as false: an overclaimed success");
    await shot(page, `false-claim-resolved-${size}`);

    // Off the queue's tab, still among the overclaimed successes.
    await page.goto("/review?outcome=rejected");
    await expect(page.getByRole("main")).not.toContainText(id);
    await page.goto(`/operations?overclaimed=true&q=${id}`);
    await expect(page.getByRole("row", { name: new RegExp(id) })).toBeVisible();
  });
}
