import { expect, test } from "@playwright/test";
import { Webhook } from "standardwebhooks";
import { startReceiver } from "../lib/webhooks/testing/receiver";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";

test("an admin adds an endpoint, sees its secret once, sends a test event, reads the delivery log and redelivers", async ({ page }) => {
  const rx = await startReceiver();
  try {
    await signIn(page, demo.admin.email, demo.admin.password);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await expect(page.getByRole("heading", { name: "Webhooks", level: 1 })).toBeVisible();
    await expect(page.getByText("No endpoints yet.")).toBeVisible();
    await shot(page, "webhooks-empty");

    // Keyboard only: type the URL, tick an event with the space bar, submit with Enter.
    await page.getByLabel("URL").fill(rx.url("/e2e"));
    await page.getByLabel("Description").fill("on-call channel");
    await page.getByRole("checkbox", { name: /operation\.needs_review/ }).focus();
    await page.keyboard.press("Space");
    await page.getByLabel("URL").focus();
    await page.keyboard.press("Enter");
    const secret = (await page.getByTestId("new-secret").textContent()) ?? "";
    expect(secret).toMatch(/^whsec_/);
    rx.secrets.set("/e2e", secret);
    await expect(page.getByRole("status").filter({ hasText: "shown once" })).toBeVisible();
    const endpoint = page.getByRole("listitem").filter({ hasText: rx.url("/e2e") });
    await expect(endpoint.getByRole("definition").filter({ hasText: /^operation\.needs_review$/ })).toBeVisible();
    await expect(endpoint.getByText("enabled", { exact: true })).toBeVisible();

    await endpoint.getByRole("button", { name: `Send a test event to ${rx.url("/e2e")}` }).click();
    await expect(page.getByRole("status").filter({ hasText: /Test event msg_.* queued/ })).toBeVisible();
    await expect.poll(() => rx.received.length, { timeout: 15_000 }).toBe(1);
    expect(rx.received[0]).toMatchObject({ verified: true, path: "/e2e" });
    expect(rx.received[0].body.type).toBe("webhook.test");

    // The log shows the attempt: status, latency, the receiver's answer.
    await expect(async () => {
      await page.reload();
      await expect(page.locator("#log").getByText("delivered", { exact: true })).toBeVisible({ timeout: 1000 });
    }).toPass({ timeout: 15_000 });
    const log = page.locator("#log");
    await expect(log.getByText(rx.received[0].id)).toBeVisible();
    await expect(log.getByRole("cell", { name: "200" })).toBeVisible();
    await expect(log.getByRole("cell", { name: /^\d+ ms$/ })).toBeVisible();
    await expect(log.getByRole("cell", { name: "ok", exact: true })).toBeVisible();
    // Reloaded: the secret is not shown again, only its first characters.
    await expect(page.getByTestId("new-secret")).toHaveCount(0);
    await expect(page.getByText(`${secret.slice(0, 10)}…`)).toBeVisible();
    await noSeriousA11yViolations(page);
    await shot(page, "webhooks-desktop");
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, "webhooks-phone");
    await page.setViewportSize({ width: 1280, height: 720 });

    await log.getByRole("button", { name: /^Redeliver webhook\.test/ }).click();
    await expect.poll(() => rx.received.length, { timeout: 15_000 }).toBe(2);
    expect(rx.received[1].id).toBe(rx.received[0].id);
    expect(rx.received[1].verified).toBe(true);

    // Edit the filters: add an outcome; the summary says so.
    await endpoint.getByText("Edit URL, format and filters").click();
    const edit = endpoint.getByRole("form", { name: `Edit ${rx.url("/e2e")}` });
    await expect(edit.getByRole("checkbox", { name: /operation\.needs_review/ })).toBeChecked();
    await edit.getByRole("checkbox", { name: "divergent", exact: true }).check();
    await edit.getByRole("button", { name: "Save" }).click();
    await expect(endpoint.getByRole("definition").filter({ hasText: /^operation\.needs_review; outcome divergent$/ })).toBeVisible();

    // Disable, then delete (with a second step to confirm): back to the empty state.
    await endpoint.getByRole("button", { name: `Disable ${rx.url("/e2e")}` }).click();
    await expect(endpoint.getByText("disabled", { exact: true })).toBeVisible();
    await endpoint.getByRole("button", { name: `Delete ${rx.url("/e2e")}` }).click();
    await endpoint.getByRole("button", { name: /Delete .* and its delivery log/ }).click();
    await expect(page.getByText("No endpoints yet.")).toBeVisible();
  } finally {
    await rx.close();
  }
});

test("an admin rotates an endpoint's secret: the new one is shown once, and deliveries carry both signatures until the old one's end", async ({ page }) => {
  const rx = await startReceiver();
  try {
    await signIn(page, demo.admin.email, demo.admin.password);
    await page.goto("/settings/webhooks");
    await page.getByLabel("URL").fill(rx.url("/rotate"));
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const old = (await page.getByTestId("new-secret").textContent()) ?? "";
    expect(old).toMatch(/^whsec_/);
    const endpoint = page.getByRole("listitem").filter({ hasText: rx.url("/rotate") });
    await expect(endpoint.getByRole("term").filter({ hasText: /^Old secret$/ })).toHaveCount(0);

    // Keyboard: open the rotation, set the overlap, submit with Enter.
    await endpoint.getByText("Rotate the signing secret").click();
    const form = endpoint.getByRole("form", { name: `Rotate the secret of ${rx.url("/rotate")}` });
    await expect(form.getByLabel("Old secret still signs for (hours)")).toHaveValue("24");
    await form.getByLabel("Old secret still signs for (hours)").fill("2");
    await form.getByLabel("Old secret still signs for (hours)").press("Enter");
    await expect(endpoint.getByRole("status").filter({ hasText: /shown once.*still signs too until/ })).toBeVisible();
    const fresh = (await endpoint.getByTestId("new-secret").textContent()) ?? "";
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    // The endpoint shows the new secret's hint, and the old one's with its end (about 2 hours on).
    await expect(endpoint.getByText(`${fresh.slice(0, 10)}…`)).toBeVisible();
    await expect(endpoint.getByRole("term").filter({ hasText: /^Old secret$/ })).toBeVisible();
    await expect(endpoint.getByRole("definition").filter({ hasText: `${old.slice(0, 10)}… still signs too, until` })).toBeVisible();
    const until = await endpoint.locator("time").getAttribute("datetime");
    expect(Math.abs(Date.parse(until!) - Date.now() - 2 * 3_600_000)).toBeLessThan(120_000);
    await noSeriousA11yViolations(page);
    await shot(page, "webhooks-rotated");

    // A delivery now verifies with the new secret and with the old one (the standardwebhooks library).
    rx.secrets.set("/rotate", fresh);
    await endpoint.getByRole("button", { name: `Send a test event to ${rx.url("/rotate")}` }).click();
    await expect.poll(() => rx.received.length, { timeout: 15_000 }).toBe(1);
    const got = rx.received[0];
    expect(got.verified).toBe(true);
    expect(got.headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(() => new Webhook(old).verify(got.raw, got.headers)).not.toThrow();

    // Reloaded: the new secret is not shown again.
    await page.reload();
    await expect(page.getByTestId("new-secret")).toHaveCount(0);
    await endpoint.getByRole("button", { name: `Delete ${rx.url("/rotate")}` }).click();
    await endpoint.getByRole("button", { name: /Delete .* and its delivery log/ }).click();
    await expect(page.getByText("No endpoints yet.")).toBeVisible();
  } finally {
    await rx.close();
  }
});

test("the form refuses in a sentence naming the field, and saves a tool no operation has used with a warning", async ({ page }) => {
  await signIn(page, demo.admin.email, demo.admin.password);
  await page.goto("/settings/webhooks");
  const form = page.getByRole("form", { name: "Add an endpoint" });
  await form.getByLabel("URL").fill("https://hooks.invalid/refusals");
  await form.getByLabel("Only these tools").fill(Array.from({ length: 51 }, (_, i) => `tool${i}`).join(", "));
  await form.getByRole("button", { name: "Add endpoint" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "filters.tools" })).toHaveText("filters.tools has 51 items; at most 50 are accepted.");
  await expect(page.getByText("No endpoints yet.")).toBeVisible();

  // Fewer tools, one of them a typo: saved, and the page says which tool nothing has used.
  await form.getByLabel("Only these tools").fill("email.send, emial.send");
  await form.getByRole("button", { name: "Add endpoint" }).click();
  await expect(page.getByRole("status").filter({ hasText: "shown once" })).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: "Note:" })).toHaveText("Note: no operation has used the tool emial.send yet.");
  await noSeriousA11yViolations(page);
  const endpoint = page.getByRole("listitem").filter({ hasText: "https://hooks.invalid/refusals" });
  await endpoint.getByRole("button", { name: "Delete https://hooks.invalid/refusals" }).click();
  await endpoint.getByRole("button", { name: /Delete .* and its delivery log/ }).click();
  await expect(page.getByText("No endpoints yet.")).toBeVisible();
});

test("a reviewer sees no Webhooks link and is refused the page", async ({ page }) => {
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  await expect(page.getByRole("link", { name: "Webhooks" })).toHaveCount(0);
  await page.goto("/settings/webhooks");
  await expect(page).toHaveURL(/\/forbidden/);
});

test("an admin sees the verdicts sent to OpenTelemetry: where to, how many, the latest with their operation", async ({ page }) => {
  await signIn(page, demo.admin.email, demo.admin.password);
  await page.goto("/settings/webhooks#verdicts");
  const panel = page.locator("#verdicts");
  await expect(panel.getByRole("heading", { name: "Verdicts out" })).toBeVisible();
  await expect(panel.getByRole("definition").filter({ hasText: /^http:\/\/127\.0\.0\.1:\d+\/v1\/logs$/ })).toBeVisible();
  await expect(panel.getByText("x-e2e (values are not shown)")).toBeVisible();
  // The demo's verdicts were written with the demo data; the server sends them to the receiver of lib/testing/e2e-server.ts.
  await expect(async () => {
    await page.reload();
    await expect(panel.getByText(/^0 pending · [1-9]\d* delivered · 0 failed$/)).toBeVisible({ timeout: 1000 });
  }).toPass({ timeout: 30_000 });
  const rows = panel.getByRole("table", { name: "The latest verdict events, newest first" }).getByRole("row");
  await expect(rows).toHaveCount(21);
  await expect(rows.nth(1).getByText("delivered", { exact: true })).toBeVisible();
  await noSeriousA11yViolations(page);
  await shot(page, "webhooks-verdicts-desktop");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "webhooks-verdicts-phone");
  const link = rows.nth(1).getByRole("link");
  const id = (await link.textContent()) ?? "";
  await link.click();
  await expect(page).toHaveURL(new RegExp(`/operations/${encodeURIComponent(id).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
});
