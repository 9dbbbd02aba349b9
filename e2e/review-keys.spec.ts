import { expect, test, type Browser, type Page } from "@playwright/test";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";

/** Keyboard use and bulk triage on the review queue and the operation page (issue 18). */

const SIZES = [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;



/** A divergent operation of its own (accepted, canonically absent), recorded now: last in the queue. */
async function divergent(page: Page, prefix: string) {
  const id = `op-e2e-${prefix}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;
  const res = await page.request.post("/api/v1/receipts", {
    headers: { origin: new URL(page.url()).origin },
    data: { operation_id: id, receipt: { status: "accepted", observed_at: "2026-11-30T10:00:00Z" }, canonical_read: { status: "absent", observed_at: "2026-11-30T10:01:00Z" } },
  });
  expect(res.status()).toBe(201);
  return id;
}

/** Keys work once the page has hydrated: pressing one before that does nothing (a slow CI machine showed it). */
const keysReady = (page: Page) => page.locator('body[data-keys="on"]').waitFor({ state: "attached" });
const queue = (page: Page) => page.getByRole("table", { name: "Operations that need review, oldest call first" });
const rows = (page: Page) => queue(page).locator("tbody tr");
const currentRow = (page: Page) => queue(page).locator('tbody tr[aria-current="true"]');

for (const size of SIZES) {
  test(`keys on the queue and the operation page, and next in queue after a correction (${size.name})`, async ({ page }) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    await signIn(page, demo.reviewer.email, demo.reviewer.password);
    await page.goto("/review");
    await keysReady(page);

    // ? opens the list of keys; Escape closes it.
    await page.keyboard.press("?");
    const help = page.getByRole("dialog", { name: "Review queue keys" });
    await expect(help).toBeVisible();
    await expect(help).toContainText("Next item");
    await expect(help).toContainText("Retract the selected (or current)");
    await noSeriousA11yViolations(page);
    await shot(page, `review-keys-help-${size.name}`);
    await page.keyboard.press("Escape");
    await expect(help).toBeHidden();

    // j and k move between items; the focused link shows its focus ring and its row is marked.
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    const second = (await rows(page).nth(1).getByRole("link").textContent())!;
    await expect(currentRow(page)).toContainText(second);
    await expect(currentRow(page).getByRole("link")).toBeFocused();
    const outline = await currentRow(page).getByRole("link").evaluate((el) => getComputedStyle(el).outlineStyle);
    expect(outline).not.toBe("none");
    await page.keyboard.press("k");
    const first = (await rows(page).first().getByRole("link").textContent())!;
    await expect(currentRow(page)).toContainText(first);

    // Modifiers and typing do nothing: Alt+j stays, and keys typed in the reason are text.
    await page.keyboard.press("Alt+j");
    await expect(currentRow(page)).toContainText(first);
    await page.getByLabel("Reason (one for all)").fill("");
    await page.getByLabel("Reason (one for all)").pressSequentially("jk?c");
    await expect(page.getByLabel("Reason (one for all)")).toHaveValue("jk?c");
    await expect(page.getByRole("dialog")).toBeHidden();

    // c claims the current item.
    await rows(page).first().getByRole("link").focus();
    await page.keyboard.press("c");
    await expect(rows(page).first()).toContainText("you");
    // Leave the demo's queue as it was for the other tests.
    await rows(page).first().getByRole("button", { name: /^Release / }).click();
    await expect(rows(page).first()).toContainText("nobody");

    // On an operation of our own: r opens Resolve; after the correction, the next in the queue is offered, and j goes there.
    const id = await divergent(page, "keys");
    const after = await divergent(page, "keys-next");
    await page.goto(`/operations/${id}`);
    await keysReady(page);
    await page.keyboard.press("c");
    await expect(page.getByText("You are working on this operation.")).toBeVisible();
    await page.keyboard.press("r");
    await expect(page.getByRole("button", { name: "Resolve", exact: true })).toHaveAttribute("aria-expanded", "true");
    await page.getByLabel("not applied — the effect is absent").check();
    await page.getByLabel("Reason", { exact: true }).fill("Checked by key: not there.");
    await page.getByRole("button", { name: "Confirm resolve" }).click();
    const next = page.getByRole("link", { name: new RegExp(`Next in the review queue: ${after}`) });
    await expect(next).toBeVisible();
    await noSeriousA11yViolations(page);
    await shot(page, `operation-next-in-queue-${size.name}`);
    await page.keyboard.press("j");
    await expect(page.getByRole("heading", { level: 1, name: after })).toBeVisible();
  });
}

test("a viewer's keys do only what a viewer may: no claim, no corrections", async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
  await page.goto("/review");
  await keysReady(page);
  await expect(page.getByRole("checkbox")).toHaveCount(0);
  await page.keyboard.press("j");
  await page.keyboard.press("c");
  await page.keyboard.press("r");
  await expect(page.getByRole("button", { name: /^Claim / })).toHaveCount(0);
  await expect(page.getByRole("form")).toHaveCount(0);
  await page.keyboard.press("?");
  await expect(page.getByRole("dialog", { name: "Review queue keys" })).toBeVisible();
  await page.keyboard.press("Escape");
  await page.goto("/operations/op-2026-08-28-x-post-001");
  await keysReady(page);
  await page.keyboard.press("r");
  await page.keyboard.press("x");
  await expect(page.getByRole("heading", { name: "Review", exact: true })).toHaveCount(0);
  await expect(page.getByLabel("Reason")).toHaveCount(0);
});

async function otherReviewer(browser: Browser) {
  const other = await browser.newPage();
  await signIn(other, demo.admin.email, demo.admin.password);
  return other;
}

for (const size of SIZES) {
  test(`bulk triage: resolve the selected as not applied with one reason; a conflict on one leaves the others done (${size.name})`, async ({ page, browser }) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    await signIn(page, demo.reviewer.email, demo.reviewer.password);
    const ids = [await divergent(page, "bulk"), await divergent(page, "bulk"), await divergent(page, "bulk")];
    await page.goto("/review?outcome=divergent");
    for (const id of ids) await page.getByRole("checkbox", { name: `Select ${id}` }).check();
    await expect(page.getByRole("heading", { name: "Triage the selected (3)" })).toBeVisible();

    // Meanwhile someone else corrects the second one.
    const other = await otherReviewer(browser);
    await other.goto(`/operations/${ids[1]}`);
    await other.getByRole("button", { name: "Resolve", exact: true }).click();
    await other.getByLabel("compensated — the effect was undone").check();
    await other.getByLabel("Reason", { exact: true }).fill("Undone by hand.");
    await other.getByRole("button", { name: "Confirm resolve" }).click();
    await expect(other.getByRole("region", { name: "5. Outcome" })).toContainText("compensated");
    await other.close();

    await page.getByLabel("resolve as not applied — the effect is absent").check();
    await page.getByLabel("Reason (one for all)").fill("Searched the provider: none of these exist.");
    await page.getByRole("button", { name: "Resolve 3 selected" }).click();
    const results = page.getByRole("status").filter({ hasText: "of 3 done" });
    await expect(results).toContainText("2 of 3 done; 1 left as they were");
    await expect(results.getByRole("listitem").filter({ hasText: ids[0] })).toContainText("done, now not applied");
    await expect(results.getByRole("listitem").filter({ hasText: ids[1] })).toContainText("not done (conflict)");
    await expect(results.getByRole("listitem").filter({ hasText: ids[2] })).toContainText("done, now not applied");
    // The done ones left the queue; the refused one stays selected for another look.
    await expect(page.getByRole("checkbox", { name: `Select ${ids[0]}` })).toHaveCount(0);
    await noSeriousA11yViolations(page);
    await shot(page, `review-bulk-${size.name}`);

    await page.goto(`/operations/${ids[0]}`);
    await expect(page.getByRole("region", { name: "5. Outcome" })).toContainText("not applied");
    await expect(page.getByText("Searched the provider: none of these exist.")).toBeVisible();
    await page.goto(`/operations/${ids[1]}`);
    await expect(page.getByRole("region", { name: "5. Outcome" })).toContainText("compensated");

    // Select all on the page selects every row.
    await page.goto("/review");
    await page.getByRole("checkbox", { name: "Select all on this page" }).check();
    const boxes = queue(page).locator("tbody").getByRole("checkbox");
    const n = await boxes.count();
    await expect(page.getByRole("heading", { name: `Triage the selected (${n})` })).toBeVisible();
  });
}
