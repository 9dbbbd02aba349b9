import { expect, test } from "@playwright/test";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";

const phone = { width: 390, height: 844 };


test.beforeEach(async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
});

test("the top menu folds into a Menu button on a phone, and Escape closes it", async ({ page }) => {
  const nav = page.getByRole("navigation", { name: "Main" });
  const menu = page.getByRole("button", { name: "Menu" });
  await page.goto("/operations");
  // On a wide screen the links are simply there.
  await expect(menu).toBeHidden();
  await expect(nav.getByRole("link", { name: "Audit" })).toBeVisible();

  await page.setViewportSize(phone);
  await expect(menu).toBeVisible();
  await expect(menu).toHaveAttribute("aria-expanded", "false");
  await expect(nav).toBeHidden();
  const header = await page.locator("header").boundingBox();
  expect(header!.height).toBeLessThan(80);
  await shot(page, "menu-closed-phone");

  await menu.focus();
  await page.keyboard.press("Enter");
  await expect(menu).toHaveAttribute("aria-expanded", "true");
  await expect(nav.getByRole("link", { name: "Audit" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
  await shot(page, "menu-open-phone");
  await noSeriousA11yViolations(page);
  await page.keyboard.press("Escape");
  await expect(nav).toBeHidden();
  await expect(menu).toHaveAttribute("aria-expanded", "false");
  await expect(menu).toBeFocused();

  await menu.click();
  await nav.getByRole("link", { name: "Audit" }).click();
  await expect(page).toHaveURL(/\/audit$/);
  await expect(nav).toBeHidden();
  await expect(menu).toHaveAttribute("aria-expanded", "false");
});

test("at 1440 px an admin's whole header (every link, the account and Sign out) is one line", async ({ browser }) => {
  const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
  await signIn(page, demo.admin.email, demo.admin.password);
  await page.goto("/operations");
  const nav = page.getByRole("navigation", { name: "Main" });
  const links = nav.getByRole("link");
  // The admin sees every entry (the settings ones included): the widest navigation there is.
  await expect(links).toHaveCount(10);
  const tops = await links.evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().top)));
  expect(new Set(tops).size, `link tops: ${tops.join(", ")}`).toBe(1);
  const signOut = await page.getByRole("button", { name: "Sign out" }).boundingBox();
  const first = await links.first().boundingBox();
  expect(Math.abs(signOut!.y + signOut!.height / 2 - (first!.y + first!.height / 2))).toBeLessThan(8);
  expect((await page.locator("header").boundingBox())!.height).toBeLessThan(70);
  // The role is never cut; the address, cut short if long, shows whole on hover.
  const account = page.getByRole("link", { name: new RegExp(demo.admin.email.replace(/\./g, "\\.")) });
  const cut = (el: Element) => el.scrollWidth > el.clientWidth;
  expect(await account.locator("span").last().evaluate(cut)).toBe(false);
  await account.hover();
  expect(await account.locator("span").first().evaluate(cut)).toBe(false);
  await shot(page, "header-1440");
  await page.close();
});
