import { expect, test, type Page } from "@playwright/test";
import { demo, ingestAsSignedIn, signIn } from "./helpers";

const ESSAY = "op-2026-08-28-x-post-001";

async function queueCount(page: Page): Promise<number> {
  await page.goto("/review");
  const text = await page.getByRole("main").getByRole("paragraph").first().textContent();
  return Number(/(\d+) operations? need/.exec(text ?? "")?.[1] ?? 0);
}

test("a reviewer claims the essay's X post, resolves it as not applied, and the queue shrinks", async ({ page }) => {
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  const before = await queueCount(page);
  // A filter the queue cannot hold (verified operations never need review) is said to be one.
  await page.goto("/review?outcome=verified");
  await expect(page.getByRole("alert").filter({ hasText: "not one of the queue's filters" })).toBeVisible();
  await page.goto("/review?outcome=divergent");
  const row = page.getByRole("row", { name: new RegExp(ESSAY) });
  await row.getByRole("button", { name: `Claim ${ESSAY}` }).click();
  await expect(page.getByRole("row", { name: new RegExp(ESSAY) })).toContainText("you");
  await page.screenshot({ path: "test-results/screenshots/review.png", fullPage: true });
  await page.getByRole("link", { name: ESSAY }).click();

  await page.getByRole("button", { name: "Resolve" }).click();
  // Nothing is chosen for the reviewer: confirming waits for a resolution and a reason.
  await expect(page.getByLabel("not applied — the effect is absent")).not.toBeChecked();
  await expect(page.getByRole("button", { name: "Confirm resolve" })).toBeDisabled();
  await page.getByLabel("not applied — the effect is absent").check();
  await page.getByLabel("Reason").fill("Checked the profile and exact-text search again: the post is not there. A new post may be sent.");
  // The essay's agent told its user the post was published: not applied means that claim was false (ticked for the reviewer, who may untick it).
  await expect(page.getByRole("status").filter({ hasText: "Outcome:" })).toHaveText("Outcome: divergent → not applied. Retry: a new operation may be issued. The agent's success claim is recorded as false.");
  await page.getByRole("button", { name: "Confirm resolve" }).click();

  const corrections = page.getByRole("region", { name: "Corrections" }).or(page.locator("section", { has: page.getByRole("heading", { name: "Corrections" }) }));
  await expect(corrections).toContainText("Checked the profile and exact-text search again");
  await expect(corrections).toContainText(demo.reviewer.email);
  await expect(page.getByRole("region", { name: "5. Outcome" })).toContainText("not applied");
  await expect(page.getByRole("region", { name: "5. Outcome" })).toContainText("A new operation may be issued");
  await page.screenshot({ path: "test-results/screenshots/resolved.png", fullPage: true });
  expect(await queueCount(page)).toBe(before - 1);
});

test("a reviewer retracts an overclaimed success", async ({ page }) => {
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  const id = "op-crm-42-notify";
  await page.goto(`/operations/${id}`);
  await page.getByRole("button", { name: "Retract" }).click();
  await page.getByLabel("Reason").fill("The notification linked to a contract whose account never existed; the success claim is withdrawn.");
  await expect(page.getByRole("status").filter({ hasText: "Outcome:" })).toContainText("uncertain → divergent");
  await page.getByRole("button", { name: "Confirm retract" }).click();
  await expect(page.getByText("The agent's success claim was withdrawn.")).toBeVisible();
  // Withdrawn, the claim stays counted: the user was told "success".
  await expect(page.getByRole("region", { name: "5. Outcome" })).toContainText("a reviewer recorded that claim as false: an overclaimed success");
});

test("a second browser acting on stale state gets the conflict message and the new state", async ({ page, browser }) => {
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  const id = `op-e2e-race-${Date.now()}`;
  await ingestAsSignedIn(page, { operation_id: id, receipt: { status: "accepted", observed_at: "2026-11-30T10:00:00Z" }, canonical_read: { status: "absent", observed_at: "2026-11-30T10:01:00Z" } });
  const other = await browser.newPage();
  await signIn(other, demo.admin.email, demo.admin.password);
  await page.goto(`/operations/${id}`);
  await other.goto(`/operations/${id}`);

  await other.getByRole("button", { name: "Resolve" }).click();
  await other.getByLabel("compensated — the effect was undone").check();
  await other.getByLabel("Reason").fill("Undone by hand in the provider's console.");
  await other.getByRole("button", { name: "Confirm resolve" }).click();
  await expect(other.getByRole("region", { name: "5. Outcome" })).toContainText("compensated");

  await page.getByRole("button", { name: "Resolve" }).click();
  await page.getByLabel("not applied — the effect is absent").check();
  await page.getByLabel("Reason").fill("I think it never happened.");
  await page.getByRole("button", { name: "Confirm resolve" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "While you were looking" })).toContainText(`${demo.admin.email} made a correction (resolve as compensated`);
  await expect(page.getByRole("region", { name: "5. Outcome" })).toContainText("compensated");
  await expect(page.getByRole("button", { name: "Reopen" })).toBeVisible();
  await other.close();
});

test("a claim means something: another reviewer's claim blocks a correction until an admin takes it over", async ({ page, browser }) => {
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  const id = `op-e2e-claim-${Date.now()}`;
  await ingestAsSignedIn(page, { operation_id: id, receipt: { status: "accepted", observed_at: "2026-11-30T10:00:00Z" }, canonical_read: { status: "absent", observed_at: "2026-11-30T10:01:00Z" } });
  const admin = await browser.newPage();
  await signIn(admin, demo.admin.email, demo.admin.password);
  await admin.goto(`/operations/${id}`);
  await expect(admin.getByRole("note").filter({ hasText: "Nobody has claimed this operation." })).toBeVisible();

  // The reviewer claims it while the admin is already looking at the unclaimed page.
  await page.goto(`/operations/${id}`);
  await page.getByRole("button", { name: `Claim ${id}` }).click();
  await expect(page.getByRole("note").filter({ hasText: "You are working on this operation." })).toBeVisible();

  // Opening Resolve claims an unclaimed operation: here the reviewer was first, and the admin is told.
  await admin.getByRole("button", { name: "Resolve" }).click();
  await expect(admin.getByRole("alert").filter({ hasText: "claimed this operation while you were looking" })).toContainText(demo.reviewer.email);
  await expect(admin.getByRole("note").filter({ hasText: "is working on this operation" })).toContainText(demo.reviewer.email);
  await expect(admin.getByRole("button", { name: "Resolve" })).toBeDisabled();
  await expect(admin.getByLabel("Reason")).toHaveCount(0);

  // Taking over is explicit (and recorded).
  await admin.getByRole("button", { name: `Take over ${id}` }).click();
  await expect(admin.getByRole("note").filter({ hasText: "You are working on this operation." })).toBeVisible();

  // The reviewer, still on the old page, cannot release what the admin now holds.
  await page.getByRole("button", { name: `Release ${id}` }).click();
  await expect(page.getByRole("alert").filter({ hasText: "only they or an admin may release it" })).toContainText(demo.admin.email);
  await expect(page.getByRole("note").filter({ hasText: "is working on this operation" })).toContainText(demo.admin.email);
  await expect(page.getByRole("button", { name: `Release ${id}` })).toHaveCount(0);

  // The admin corrects it; the correction ends the admin's claim.
  await admin.getByRole("button", { name: "Resolve" }).click();
  await admin.getByLabel("compensated — the effect was undone").check();
  await admin.getByLabel("Reason").fill("Undone by hand.");
  await admin.getByRole("button", { name: "Confirm resolve" }).click();
  await expect(admin.getByRole("region", { name: "5. Outcome" })).toContainText("compensated");
  await expect(admin.getByRole("note").filter({ hasText: "Nobody has claimed this operation." })).toBeVisible();
  await admin.close();
});

test("opening Resolve claims an unclaimed operation, and the correction releases it", async ({ page }) => {
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  const id = `op-e2e-autoclaim-${Date.now()}`;
  await ingestAsSignedIn(page, { operation_id: id, receipt: { status: "accepted", observed_at: "2026-11-30T10:00:00Z" }, canonical_read: { status: "absent", observed_at: "2026-11-30T10:01:00Z" } });
  await page.goto(`/operations/${id}`);
  await expect(page.getByRole("note").filter({ hasText: "Nobody has claimed this operation." })).toBeVisible();
  await page.getByRole("button", { name: "Resolve" }).click();
  await expect(page.getByRole("note").filter({ hasText: "You are working on this operation." })).toBeVisible();
  await page.goto("/review?outcome=divergent");
  await expect(page.getByRole("row", { name: new RegExp(id) })).toContainText("you");

  await page.goto(`/operations/${id}`);
  await page.getByRole("button", { name: "Resolve" }).click();
  await page.getByLabel("not applied — the effect is absent").check();
  await page.getByLabel("Reason").fill("Not there.");
  await page.getByRole("button", { name: "Confirm resolve" }).click();
  await expect(page.getByRole("region", { name: "5. Outcome" })).toContainText("not applied");
  await expect(page.getByRole("note").filter({ hasText: "Nobody has claimed this operation." })).toBeVisible();
});

test("a viewer sees the whole history and no action buttons", async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
  await page.goto(`/operations/${ESSAY}`);
  await expect(page.getByRole("heading", { name: "Corrections" })).toBeVisible();
  for (const name of ["Resolve", "Retract", "Reopen"]) await expect(page.getByRole("button", { name })).toHaveCount(0);
  await page.goto("/review");
  await expect(page.getByRole("button", { name: /^Claim/ })).toHaveCount(0);
});

test("the queue shows both clocks as ages, the UTC time on hover, and marks items older than the threshold", async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
  await page.goto("/review");
  await expect(page.getByRole("navigation", { name: "Queue order" })).toContainText("calls over 24 h old have their age in amber");
  await expect(page.getByRole("navigation", { name: "Queue order" }).getByRole("link", { name: "oldest call first" })).toHaveAttribute("aria-current", "page");
  // The demo's CRM run was called days before the demo recorded it (its receipts say when). The
  // queue is in call order, so it is wherever that puts it: follow "More" until it shows.
  const row = page.getByRole("row", { name: /op-crm-42-create-account/ });
  for (let i = 0; i < 5 && !(await row.count()); i++) await page.goto((await page.getByRole("link", { name: "More →" }).getAttribute("href"))!);
  const called = row.locator("time").first();
  await expect(called).toHaveAttribute("title", /^\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC$/);
  await expect(called).toHaveText(/^\d+ (d|mo) ago$/);
  await expect(row).toContainText(/recorded (just now|\d+ (s|min|h|d|mo) ago)/);
  // Marked by its age's colour (and said to assistive technology), not a badge on every row.
  await expect(row).toContainText("(over 24 h old)");
  await expect(row.locator("time").first().locator("xpath=..")).toHaveClass(/text-amber-800/);
  await page.goto("/operations");
  await expect(page.locator("tbody tr").first().locator("time")).toHaveAttribute("title", / UTC$/);
});

test("after a correction, focus goes to what was recorded; the history names what a reopen returned to", async ({ page }) => {
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  const id = `op-e2e-focus-${Date.now()}`;
  await ingestAsSignedIn(page, { operation_id: id, receipt: { status: "accepted", observed_at: "2026-11-30T10:00:00Z" }, canonical_read: { status: "absent", observed_at: "2026-11-30T10:01:00Z" } });
  await page.goto(`/operations/${id}`);
  await page.getByRole("button", { name: "Resolve" }).click();
  // Confirm says why it is not available yet.
  const confirm = page.getByRole("button", { name: "Confirm resolve" });
  await expect(confirm).toBeDisabled();
  await expect(confirm).toHaveAccessibleDescription("Choose what happened first.");
  await page.getByLabel("not applied — the effect is absent").check();
  await expect(confirm).toHaveAccessibleDescription("Write a reason first.");
  await page.getByLabel("Reason").fill("Not there.");
  await expect(confirm).toBeEnabled();
  await confirm.press("Enter");
  // The form is gone: a keyboard user lands on the result and the way to the next item.
  await expect(page.getByRole("status").filter({ hasText: "Resolve recorded." })).toBeFocused();
  await expect(page.getByRole("region", { name: "5. Outcome" })).toContainText("not applied");

  await page.getByRole("button", { name: "Reopen", exact: true }).click();
  await page.getByLabel("Reason").fill("Wrong mailbox checked.");
  // Ctrl+Enter in the reason confirms, as in the note form.
  await page.getByLabel("Reason").press("Control+Enter");
  await expect(page.getByRole("status").filter({ hasText: "Reopen recorded." })).toBeFocused();
  const history = page.getByRole("region", { name: "Corrections and notes" }).getByRole("listitem");
  await expect(history.filter({ hasText: "Resolve" })).toContainText(/divergent\s*→\s*not applied/);
  // A reopen returns to the outcome before the resolve: said, not "not recorded".
  await expect(history.filter({ hasText: "Reopen" })).toContainText(/not applied\s*→\s*divergent/);
  await expect(history.filter({ hasText: "Reopen" })).not.toContainText("not recorded");
});

test("a correction refused because another reviewer acted leaves the panel saying who holds the operation", async ({ page, browser }) => {
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  const id = `op-e2e-stale-claim-${Date.now()}`;
  await ingestAsSignedIn(page, { operation_id: id, receipt: { status: "accepted", observed_at: "2026-11-30T10:00:00Z" }, canonical_read: { status: "absent", observed_at: "2026-11-30T10:01:00Z" } });
  await page.goto(`/operations/${id}`);
  // Opening Resolve claims it for the reviewer.
  await page.getByRole("button", { name: "Resolve" }).click();
  await expect(page.getByRole("note").filter({ hasText: "You are working on this operation." })).toBeVisible();

  // An admin takes it over and corrects it, which ends the claim.
  const admin = await browser.newPage();
  await signIn(admin, demo.admin.email, demo.admin.password);
  await admin.goto(`/operations/${id}`);
  await admin.getByRole("button", { name: `Take over ${id}` }).click();
  await admin.getByRole("button", { name: "Resolve" }).click();
  await admin.getByLabel("compensated — the effect was undone").check();
  await admin.getByLabel("Reason").fill("Undone by hand.");
  await admin.getByRole("button", { name: "Confirm resolve" }).click();
  await expect(admin.getByRole("note").filter({ hasText: "Nobody has claimed this operation." })).toBeVisible();
  await admin.close();

  // The reviewer's form, sent on the old state, is refused; the panel then says what the server says.
  await page.getByLabel("not applied — the effect is absent").check();
  await page.getByLabel("Reason").fill("I think it never happened.");
  await page.getByRole("button", { name: "Confirm resolve" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "While you were looking" })).toBeVisible();
  await expect(page.getByRole("region", { name: "5. Outcome" })).toContainText("compensated");
  await expect(page.getByRole("note").filter({ hasText: "Nobody has claimed this operation." })).toBeVisible();
  await expect(page.getByRole("button", { name: `Release ${id}` })).toHaveCount(0);
});
