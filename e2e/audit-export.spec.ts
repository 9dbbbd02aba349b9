import { expect, test } from "@playwright/test";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";


test.beforeEach(async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
});

for (const size of ["desktop", "phone"] as const) {
  for (const format of ["ndjson", "csv", "json"] as const) {
    test(`a ${format.toUpperCase()} export for an unknown operation says 0 records and saves nothing; a known one says how many (${size})`, async ({ page }) => {
      if (size === "phone") await page.setViewportSize({ width: 390, height: 844 });
      await page.goto("/audit");
      const downloads: string[] = [];
      page.on("download", (d) => downloads.push(d.suggestedFilename()));
      await page.getByLabel("Format").selectOption(format);
      await page.getByLabel("Operation").fill("op-no-such-operation-anywhere");
      await page.getByRole("button", { name: "Export" }).click();
      await expect(page.getByRole("status").filter({ hasText: "0 records match: nothing to download." })).toBeVisible();
      if (format === "ndjson") {
        await shot(page, `audit-export-empty-${size}`);
        await noSeriousA11yViolations(page);
      }

      // The essay's X post has its receipt, its reads and its classification in the chain.
      await page.getByLabel("Operation").fill("op-2026-08-28-x-post-001");
      const download = page.waitForEvent("download");
      await page.getByRole("button", { name: "Export" }).click();
      await download;
      const saved = page.getByRole("status").filter({ hasText: /^Saved reconcile-audit-/ });
      await expect(saved).toBeVisible();
      const n = Number(/: (\d+) records? \(/.exec((await saved.textContent()) ?? "")?.[1]);
      expect(n).toBeGreaterThan(1);
      expect(downloads).toHaveLength(1);
    });
  }
}
