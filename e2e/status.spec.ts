import { expect, test } from "@playwright/test";
import { demo, ingestAsSignedIn, noSeriousA11yViolations, shot, signIn } from "./helpers";

for (const size of ["desktop", "phone"] as const) {
  test(`after a correction every status says what the reviewer did, who, when, and what it overrides (${size})`, async ({ page }) => {
    if (size === "phone") await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, demo.reviewer.email, demo.reviewer.password);
    const stamp = `${Date.now()}-${size}`;
    const trajectory = `run-e2e-status-${stamp}`;
    const absent = `op-e2e-status-absent-${stamp}`;
    const claimed = `op-e2e-status-claimed-${stamp}`;
    const at = (min: number) => new Date(Date.now() - min * 60_000).toISOString();
    await ingestAsSignedIn(page, { operation_id: absent, trajectory_id: trajectory, tool: { name: "db.insert" }, receipt: { status: "accepted", observed_at: at(3) }, canonical_read: { status: "absent", observed_at: at(2) } });
    await ingestAsSignedIn(page, {
      operation_id: claimed, trajectory_id: trajectory, tool: { name: "email.send" }, claimed_outcome: "success",
      receipt: { status: "accepted", observed_at: at(3) }, canonical_read: { status: "match", observed_at: at(2), evidence: { object_id: "msg-1" } },
    });

    // Resolve one as not applied and retract the other's success claim, from the operation page.
    // The status sits in the block at the top of the operation's page (the page of this id: its id under the title).
    const headerOf = (id: string) => page.getByRole("main").filter({ has: page.getByTitle(id, { exact: true }) }).getByRole("region", { name: "Outcome and review" });
    await page.goto(`/operations/${absent}`);
    await expect(headerOf(absent)).toContainText("the write was accepted but the canonical effect is absent");
    await page.getByRole("button", { name: "Resolve" }).click();
    await page.getByLabel("not applied — the effect is absent").check();
    await page.getByLabel("Reason").fill("Not in the table.");
    await page.getByRole("button", { name: "Confirm resolve" }).click();
    const resolved = new RegExp(`resolved as not applied by ${demo.reviewer.email.replace(".", "\\.")} at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d(\\.\\d+)? UTC \\(was: divergent — the write was accepted but the canonical effect is absent\\)`);
    await expect(headerOf(absent)).toContainText(resolved);

    await page.goto(`/operations/${claimed}`);
    await page.getByRole("button", { name: "Retract" }).click();
    await page.getByLabel("Reason").fill("The message bounced.");
    await page.getByRole("button", { name: "Confirm retract" }).click();
    const retracted = /success claim retracted by .+ at .+ UTC: now divergent \(was: verified — canonical state matches the intended effect\)/;
    await expect(headerOf(claimed)).toContainText(retracted);

    // The list, searched by id, says the same; so do the trajectory's steps.
    await page.goto(`/operations?q=${absent}`);
    await expect(page.getByRole("row", { name: new RegExp(absent) })).toContainText(resolved);
    await expect(page.getByRole("row", { name: new RegExp(absent) })).not.toContainText(/^the write was accepted/);
    await page.goto(`/trajectories/${trajectory}`);
    await expect(page.getByRole("main")).toContainText(resolved);
    await expect(page.getByRole("main")).toContainText(retracted);
    await shot(page, `status-after-correction-${size}`);
    await noSeriousA11yViolations(page);

    // Reopened, the status is the classification's reason again.
    await page.goto(`/operations/${absent}`);
    await page.getByRole("button", { name: "Reopen" }).click();
    await page.getByLabel("Reason").fill("Looking again.");
    await page.getByRole("button", { name: "Confirm reopen" }).click();
    await expect(headerOf(absent)).not.toContainText("resolved as");
    await expect(headerOf(absent)).toContainText("the write was accepted but the canonical effect is absent");
  });
}
