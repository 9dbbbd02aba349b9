import { expect, test } from "@playwright/test";
import { EMPTY_PORT } from "../playwright.config";
import { shot } from "./helpers";

test.use({ baseURL: `http://127.0.0.1:${EMPTY_PORT}` });

test("on an empty database the first visitor creates the admin, then the page is gone", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/setup$/);
  await expect(page.getByRole("heading", { name: "Create the first admin" })).toBeVisible();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("A tool receipt is not an outcome.");

  await page.getByLabel("Email").fill("first-admin@example.test");
  await page.getByLabel("Password", { exact: true }).fill("first admin passphrase");
  await page.getByLabel("Password again").fill("a different passphrase");
  await page.getByRole("button", { name: "Create admin and sign in" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "The two passwords differ." })).toBeVisible();
  await expect(page.getByLabel("Email")).toHaveValue("first-admin@example.test");

  await page.getByLabel("Password", { exact: true }).fill("first admin passphrase");
  await page.getByLabel("Password again").fill("first admin passphrase");
  await page.getByRole("button", { name: "Create admin and sign in" }).click();
  await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();
  await expect(page.getByText("first-admin@example.test")).toBeVisible();
  // An empty project says how to send to it, by each of the three ways in, with this server's own URLs.
  await expect(page.getByText("No operations yet: send this project its first one (below).")).toBeVisible();
  const waysIn = page.getByRole("region", { name: "Nothing recorded here yet: three ways to send to this project" });
  const origin = `http://127.0.0.1:${EMPTY_PORT}`;
  await expect(waysIn).toContainText(`curl -X POST ${origin}/api/v1/receipts`);
  await expect(waysIn).toContainText(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=${origin}/api/v1/otlp/v1/traces`);
  await expect(waysIn).toContainText(`"url": "${origin}"`);
  await expect(waysIn.getByRole("link", { name: "make one on the Tokens page" })).toHaveAttribute("href", /\/settings\/tokens$/);
  await shot(page, "overview-empty-desktop");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "overview-empty-phone");
  await page.setViewportSize({ width: 1280, height: 720 });

  // The one-time page is gone, for a signed-in person and for anyone else.
  await page.goto("/setup");
  await expect(page).not.toHaveURL(/\/setup$/);
  await page.context().clearCookies();
  await page.goto("/setup");
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
});
