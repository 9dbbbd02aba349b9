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
