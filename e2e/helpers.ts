import AxeBuilder from "@axe-core/playwright";
import { expect, type Page } from "@playwright/test";
import { DEMO_USERS } from "../lib/domain/demo-users";

export const demo = Object.fromEntries(DEMO_USERS.map((u) => [u.role, u])) as Record<(typeof DEMO_USERS)[number]["role"], (typeof DEMO_USERS)[number]>;

/** Signs in through the real form, as a person would. */
export async function signIn(page: Page, email: string, password: string) {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();
}

/** Ingests one record as the signed-in person (their session; same-origin, as the app's own pages send). Expects 201: a new operation. */
export async function ingestAsSignedIn(page: Page, record: Record<string, unknown>) {
  const res = await page.request.post("/api/v1/receipts", { headers: { origin: new URL(page.url()).origin }, data: record });
  expect(res.status()).toBe(201);
}

/** A full-page screenshot in test-results/screenshots/, to look at. */
export const shot = (page: Page, name: string) => page.screenshot({ path: `test-results/screenshots/${name}.png`, fullPage: true });

/** The accessibility check every page test runs: no serious or critical axe violation. */
export async function noSeriousA11yViolations(page: Page) {
  // A page refreshed after an action (router.refresh) has no <title> for a moment while the new
  // metadata streams in; axe then reports document-title (a CI run showed it once). Analyse the
  // settled page: a page that never gets a title still fails here, by name.
  await expect(page, "the page has a title").toHaveTitle(/\S/);
  const { violations } = await new AxeBuilder({ page }).analyze();
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`)).toEqual([]);
}
