import { expect, test } from "@playwright/test";

test("the landing page explains the product", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("A tool receipt is not an outcome.");
  await expect(page.getByRole("list", { name: "The five stages of an operation" }).getByRole("listitem")).toHaveCount(5);
  await expect(page.getByText("divergent", { exact: true })).toBeVisible();
});

test("the health endpoint answers ok", async ({ request }) => {
  const res = await request.get("/api/health");
  expect(res.status()).toBe(200);
  expect(await res.json()).toEqual({ status: "ok" });
});
