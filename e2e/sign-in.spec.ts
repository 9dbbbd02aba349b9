import { expect, test } from "@playwright/test";
import { demo, signIn } from "./helpers";

test("the landing explains the product and a wrong password reads clearly", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("A tool receipt is not an outcome.");
  await expect(page.getByRole("list", { name: "The five stages of an operation" }).getByRole("listitem")).toHaveCount(5);
  await expect(page.getByLabel("Email")).toHaveAttribute("type", "email");
  await expect(page.getByLabel("Password")).toHaveAttribute("type", "password");

  await page.getByLabel("Email").fill(demo.admin.email);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "Wrong email or password." })).toBeVisible();
  await expect(page.getByLabel("Email")).toHaveValue(demo.admin.email);
});

test("an admin signs in through the form, sees the overview, and signs out", async ({ page }) => {
  await signIn(page, demo.admin.email, demo.admin.password);
  await expect(page.getByText(`${demo.admin.email} · admin`)).toBeVisible();
  await expect(page.getByRole("list", { name: "Operations by effective outcome" })).toContainText("divergent");
  await page.screenshot({ path: "test-results/screenshots/overview.png", fullPage: true });
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login/);
  await page.goto("/settings/tokens");
  await expect(page).toHaveURL(/\/login\?from=%2Fsettings%2Ftokens$/);
});

test("a viewer sees no admin pages, and the server refuses them anyway", async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Users" })).toHaveCount(0);
  await page.goto("/settings/users");
  await expect(page).toHaveURL(/\/forbidden$/);
  await expect(page.getByRole("heading", { name: "You may not open this page" })).toBeVisible();
});

test("a token created in the UI works once copied, and stops working when revoked", async ({ page, request }) => {
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  await page.getByRole("link", { name: "API tokens" }).click();
  const name = `e2e ${Date.now()}`;
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("read").check();
  await page.getByRole("button", { name: "Create token" }).click();
  const token = (await page.getByTestId("new-token").textContent())!.trim();
  expect(token).toMatch(/^rcl_/);
  await page.screenshot({ path: "test-results/screenshots/tokens.png", fullPage: true });

  const auth = { authorization: `Bearer ${token}` };
  expect((await request.get("/api/v1/operations?limit=1", { headers: auth })).status()).toBe(200);

  const row = page.getByRole("row", { name: new RegExp(name) });
  await expect(row).toContainText(`${token.slice(0, 8)}…${token.slice(-4)}`);
  // Revoking asks first; Cancel keeps the token.
  await row.getByRole("button", { name: /^Revoke/ }).click();
  await row.getByRole("button", { name: "Cancel" }).click();
  expect((await request.get("/api/v1/operations?limit=1", { headers: auth })).status()).toBe(200);
  await row.getByRole("button", { name: /^Revoke/ }).click();
  await row.getByRole("button", { name: /^Yes, revoke/ }).click();
  await expect(row.getByRole("status")).toHaveText(`Revoked “${name}”: it no longer works.`);
  await page.reload();
  await expect(page.getByRole("row", { name: new RegExp(name) })).toHaveCount(0);
  expect((await request.get("/api/v1/operations?limit=1", { headers: auth })).status()).toBe(401);
});

test("security headers: a CSP the app works under, no framing, nosniff, a referrer policy", async ({ page }) => {
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  const res = await page.goto("/login");
  const h = res!.headers();
  expect(h["content-security-policy"]).toContain("frame-ancestors 'none'");
  expect(h["content-security-policy"]).toMatch(/script-src 'self' 'nonce-/);
  expect(h["x-content-type-options"]).toBe("nosniff");
  expect(h["referrer-policy"]).toBe("same-origin");
  await signIn(page, demo.admin.email, demo.admin.password);
  expect(errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
});

test("an admin signs a user out everywhere from the users page; that user's open page then asks to sign in", async ({ browser }) => {
  const viewerContext = await browser.newContext();
  const viewer = await viewerContext.newPage();
  await signIn(viewer, demo.viewer.email, demo.viewer.password);
  const adminContext = await browser.newContext();
  const admin = await adminContext.newPage();
  await signIn(admin, demo.admin.email, demo.admin.password);
  // Users are the instance's: in the header's project menu, for instance admins.
  await admin.getByTitle("Switch project").click();
  await admin.getByRole("list", { name: "This server" }).getByRole("link", { name: "Users" }).click();
  await admin.getByRole("button", { name: `Sign out ${demo.viewer.email} everywhere` }).click();
  await expect(admin.getByRole("status").filter({ hasText: `Every session of ${demo.viewer.email} has ended.` })).toBeVisible();
  await admin.screenshot({ path: "test-results/screenshots/users.png", fullPage: true });
  await viewer.goto("/operations");
  await expect(viewer).toHaveURL(/\/login/);
  await expect(viewer.getByRole("heading", { name: "Sign in", exact: true })).toBeVisible();
  // The admin's own session is untouched.
  await admin.goto("/operations");
  await expect(admin.getByRole("heading", { name: "Operations" })).toBeVisible();
  await viewerContext.close();
  await adminContext.close();
});
