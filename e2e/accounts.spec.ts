import { expect, test, type Page } from "@playwright/test";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";

/** Accounts (issue 19): passwords an admin sets are changed at first sign-in; people change their own; admins see and revoke every token. */

async function signInTo(page: Page, email: string, password: string) {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

test("a user an admin added must choose their own password at first sign-in, and nothing else opens until they do", async ({ browser }) => {
  const email = `new-${Date.now()}@example.com`;
  const given = "given-by-the-admin-1";
  const own = "my-very-own-password-2";

  const admin = await (await browser.newContext()).newPage();
  await signIn(admin, demo.admin.email, demo.admin.password);
  await admin.goto("/settings/users");
  await admin.getByLabel("Email").fill(email);
  // The rules are written out and ticked while typing, not left to the browser's tooltip.
  const rules = admin.getByTestId("new-password-rules");
  await admin.getByLabel("Initial password").fill("short");
  await expect(rules.getByText("At least 12 characters (5 so far)")).toHaveAttribute("data-met", "no");
  await admin.getByLabel("Initial password").fill(given);
  await expect(rules.locator("li").first()).toHaveAttribute("data-met", "yes");
  await admin.getByRole("button", { name: "Add user" }).click();
  await expect(admin.getByRole("status").filter({ hasText: `Added ${email} as viewer.` })).toBeVisible();

  const page = await (await browser.newContext()).newPage();
  await signInTo(page, email, given);
  await expect(page).toHaveURL(/\/password$/);
  await expect(page.getByRole("heading", { name: "Choose your own password" })).toBeVisible();
  // Nothing typed yet: no rule reads as met, "not your email" included (issue 39), for the eye
  // and for a screen reader.
  const ownRules = page.getByTestId("next-password-rules");
  await expect(ownRules.getByText("Not your email address")).toHaveAttribute("data-met", "no");
  await expect(ownRules.locator('li[data-met="yes"]')).toHaveCount(0);
  await expect(ownRules).not.toContainText("Met:");
  await noSeriousA11yViolations(page);
  await shot(page, "password-required");
  // Every other page leads back here; the API refuses the session.
  await page.goto("/operations");
  await expect(page).toHaveURL(/\/password$/);
  expect((await page.request.get("/api/v1/operations?limit=1")).status()).toBe(401);

  await page.getByLabel("Password you were given").fill(given);
  await page.getByLabel("New password", { exact: true }).fill(own);
  await page.getByLabel("New password again").fill(`${own}x`);
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "The two new passwords differ." })).toBeVisible();
  await page.getByLabel("Password you were given").fill(given);
  await page.getByLabel("New password", { exact: true }).fill(given);
  await page.getByLabel("New password again").fill(given);
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "The new password must differ from the current one." })).toBeVisible();
  await page.getByLabel("Password you were given").fill(given);
  await page.getByLabel("New password", { exact: true }).fill(own);
  await page.getByLabel("New password again").fill(own);
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();

  // The old password no longer signs in; the new one does, straight to the overview.
  const again = await (await browser.newContext()).newPage();
  await signInTo(again, email, given);
  await expect(again.getByRole("alert").filter({ hasText: "Wrong email or password." })).toBeVisible();
  await signIn(again, email, own);
});

test("anyone changes their own password on their account page, reached from their name", async ({ page }) => {
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  await page.getByRole("link", { name: `${demo.reviewer.email} · reviewer` }).click();
  await expect(page.getByRole("heading", { name: "Your account" })).toBeVisible();
  await page.getByLabel("Current password").fill("not my password at all");
  await page.getByLabel("New password", { exact: true }).fill("a-new-reviewer-password");
  await page.getByLabel("New password again").fill("a-new-reviewer-password");
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "The current password is not right." })).toBeVisible();
  await noSeriousA11yViolations(page);
  await shot(page, "account");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "account-phone");
  // Changed and changed back, so the shared demo account keeps its password for other tests.
  for (const [from, to] of [
    [demo.reviewer.password, "a-new-reviewer-password"],
    ["a-new-reviewer-password", demo.reviewer.password],
  ]) {
    await page.getByLabel("Current password").fill(from);
    await page.getByLabel("New password", { exact: true }).fill(to);
    await page.getByLabel("New password again").fill(to);
    await page.getByRole("button", { name: "Change password" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Password changed." })).toBeVisible();
  }
});

test("an admin sees other users' tokens (never the secret) and revokes one after confirming", async ({ browser }) => {
  const viewer = await (await browser.newContext()).newPage();
  await signIn(viewer, demo.viewer.email, demo.viewer.password);
  await viewer.goto("/settings/tokens");
  const name = `viewer script ${Date.now()}`;
  await viewer.getByLabel("Name").fill(name);
  await viewer.getByLabel("read").check();
  await viewer.getByLabel("ingest").uncheck();
  await viewer.getByRole("button", { name: "Create token" }).click();
  const token = (await viewer.getByTestId("new-token").textContent())!.trim();
  const auth = { authorization: `Bearer ${token}` };
  expect((await viewer.request.get("/api/v1/operations?limit=1", { headers: auth })).status()).toBe(200);

  const admin = await (await browser.newContext()).newPage();
  await signIn(admin, demo.admin.email, demo.admin.password);
  await admin.goto("/settings/tokens");
  const section = admin.getByRole("region", { name: "Other users' tokens" });
  const row = section.getByRole("row", { name: new RegExp(name) });
  await expect(row).toContainText(demo.viewer.email);
  await expect(row).toContainText(`${token.slice(0, 8)}…${token.slice(-4)}`);
  await expect(section).not.toContainText(token);
  await noSeriousA11yViolations(admin);
  await shot(admin, "tokens-admin");
  // On a phone the tables scroll inside their box; the page itself stays the screen's width.
  await admin.setViewportSize({ width: 390, height: 844 });
  expect(await admin.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await admin.setViewportSize({ width: 1280, height: 800 });
  await row.getByRole("button", { name: /^Revoke/ }).click();
  await expect(row.getByRole("button", { name: /^Yes, revoke/ })).toBeFocused();
  await admin.keyboard.press("Enter");
  await expect(row.getByRole("status")).toHaveText(`Revoked ${demo.viewer.email}'s token “${name}”: it no longer works.`);
  expect((await viewer.request.get("/api/v1/operations?limit=1", { headers: auth })).status()).toBe(401);
});
