import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";

const phone = { width: 390, height: 844 };

/**
 * Projects as people use them: an instance admin creates one and adds a member; the member
 * switches to it from the header; its pages show its own (empty) data, and another project's
 * operation under its URL is not there.
 */
test("an instance admin creates a project and adds a member, who switches to it and sees only its data", async ({ page, browser }) => {
  const slug = `e2e-${Date.now().toString(36)}`;
  await signIn(page, demo.admin.email, demo.admin.password);
  // The old paths lead into the default project.
  await expect(page).toHaveURL(/\/p\/default$/);

  await page.goto("/settings/projects");
  await expect(page.getByRole("heading", { name: "Projects" })).toBeVisible();
  await page.getByLabel("Slug (in its URLs)").fill(slug);
  await page.getByLabel("Name", { exact: true }).fill("Billing agents");
  await page.getByRole("button", { name: "Create project" }).click();
  await expect(page.getByText(`Created Billing agents: open it at /p/${slug}.`)).toBeVisible({ timeout: 20_000 });
  await shot(page, "projects-desktop");
  await noSeriousA11yViolations(page);
  await page.getByRole("link", { name: "Open it" }).click();
  await expect(page).toHaveURL(new RegExp(`/p/${slug}$`));
  await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Members" }).click();
  await expect(page).toHaveURL(new RegExp(`/p/${slug}/settings/members$`));
  await page.getByLabel("Email of an existing user").fill(demo.viewer.email);
  await page.getByRole("button", { name: "Add member" }).click();
  await expect(page.getByText(`${demo.viewer.email} is viewer in Billing agents.`)).toBeVisible();
  await expect(page.getByRole("row", { name: new RegExp(demo.viewer.email.replace(/\./g, "\\.")) })).toBeVisible();
  // Its admin renames it; the address stays, and the header's menu says the new name.
  const rename = page.getByRole("form", { name: "Rename this project" });
  await rename.getByLabel("Name").fill("Billing agents (EU)");
  await rename.getByRole("button", { name: "Rename" }).click();
  await expect(rename.getByRole("status")).toHaveText(`This project is called Billing agents (EU) now; its address stays /p/${slug}.`);
  await expect(page.getByTitle("Switch project")).toContainText("Billing agents (EU)");
  await expect(page.getByRole("heading", { name: "Members of Billing agents (EU)" })).toBeVisible();
  await shot(page, "members-desktop");
  await noSeriousA11yViolations(page);

  const viewerContext = await browser.newContext();
  const viewer = await viewerContext.newPage();
  await signIn(viewer, demo.viewer.email, demo.viewer.password);
  // The header's project menu lists the projects this user may open, and switches.
  await viewer.getByTitle("Switch project").click();
  const projects = viewer.getByRole("list", { name: "Your projects" });
  await expect(projects.getByRole("link")).toHaveCount(2);
  await projects.getByRole("link", { name: /Billing agents \(EU\)/ }).click();
  await expect(viewer).toHaveURL(new RegExp(`/p/${slug}$`));
  await viewer.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Operations" }).click();
  await expect(viewer).toHaveURL(new RegExp(`/p/${slug}/operations$`));
  await expect(viewer.getByText("No operations yet.")).toBeVisible();
  // A viewer does not manage members.
  await expect(viewer.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Members" })).toHaveCount(0);

  // The default project's operation is not this project's: its URL here finds nothing.
  await viewer.goto(`/p/${slug}/operations/op-crm-42-generate-contract`);
  await expect(viewer.getByRole("heading", { name: /No operation/ })).toBeVisible();
  await viewer.goto("/p/default/operations/op-crm-42-generate-contract");
  // Found there: titled by what happened, its id beneath.
  await expect(viewer.getByRole("heading", { level: 1, name: "files.generate · contract PDF" })).toBeVisible();
  await expect(viewer.getByTitle("op-crm-42-generate-contract", { exact: true })).toBeVisible();

  await viewer.setViewportSize(phone);
  await viewer.goto(`/p/${slug}/operations`);
  await shot(viewer, "project-operations-phone");
  await viewerContext.close();
});

test("a project one is not a member of does not exist for one", async ({ page }) => {
  await signIn(page, demo.viewer.email, demo.viewer.password);
  const res = await page.goto("/p/no-such-project/operations");
  expect(res?.status()).toBe(404);
});

test("signing in lands on the default project in one round trip, not a second page load", async ({ page }) => {
  await page.goto("/login?from=%2Foperations");
  await page.getByLabel("Email").fill(demo.viewer.email);
  await page.getByLabel("Password").fill(demo.viewer.password);
  // The sign-in action redirects to /p/default/operations, a rewritten URL: its answer carries
  // that page already (an RSC payload). Were Next.js's fetch of it to fail, as it did when the
  // rewrite lost `_rsc` (next.config.js), the action would answer empty and the browser would
  // load the whole page again.
  const documents: string[] = [];
  page.on("request", (r) => {
    if (r.resourceType() === "document") documents.push(r.url());
  });
  const action = page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/login");
  await page.getByRole("button", { name: "Sign in" }).click();
  const answer = await action;
  expect(answer.headers()["x-action-redirect"]).toMatch(/\/p\/default\/operations;/);
  expect(answer.headers()["content-type"]).toMatch(/^text\/x-component/);
  await expect(page).toHaveURL(/\/p\/default\/operations$/);
  await expect(page.getByRole("heading", { name: "Operations", exact: true })).toBeVisible();
  expect(documents).toEqual([]);
});

test("the Security log shows the instance's own trail, verifies it and offers it for download; only instance admins see it", async ({ page }) => {
  await signIn(page, demo.admin.email, demo.admin.password);
  await page.getByTitle("Switch project").click();
  await page.getByRole("list", { name: "This server" }).getByRole("link", { name: "Security log" }).click();
  await expect(page).toHaveURL(/\/settings\/security$/);
  await expect(page.getByRole("heading", { name: "Security log" })).toBeVisible();
  // This very sign-in is the newest event.
  const newest = page.getByRole("table").getByRole("row").nth(1);
  await expect(newest).toContainText("signin.succeeded");
  await expect(newest).toContainText(demo.admin.email);
  await expect(page.getByTestId("trail-records")).toContainText(/^\d[\d,]* \(head [0-9a-f]{16}…\)$/);
  await page.getByRole("button", { name: "Verify the trail now" }).click();
  // Looking at the trail signed its first checkpoint; the verification holds the trail against it.
  await expect(page.getByTestId("trail-checkpoint")).toContainText(/covering [\d,]+ records/);
  await expect(page.getByText(/^Intact: all [\d,]+ records link, up to seq \d+; [1-9]\d* checkpoints? match(es)?\.$/)).toBeVisible({ timeout: 20_000 });
  // The download is the whole trail from seq 1, and is itself recorded in it.
  const downloading = page.waitForEvent("download");
  await page.getByRole("link", { name: "Download the trail (NDJSON)" }).click();
  const file = await (await downloading).path();
  const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const records = lines.filter((l) => "seq" in l);
  expect(records[0]).toMatchObject({ seq: 1, kind: "security", prev_hash: "0".repeat(64) });
  // Its signed checkpoints ride after the records, as in a project's export.
  expect(lines.at(-1)).toMatchObject({ kind: "checkpoint", size: expect.any(Number), signature: expect.any(String) });
  expect(records.at(-1)).toMatchObject({ actor: demo.admin.email, payload: { type: "audit.exported", filter: { trail: "instance" } } });
  await shot(page, "security-log-desktop");
  await noSeriousA11yViolations(page);
  await page.setViewportSize(phone);
  await shot(page, "security-log-phone");

  const viewer = await page.context().browser()!.newContext();
  const other = await viewer.newPage();
  await signIn(other, demo.viewer.email, demo.viewer.password);
  await other.goto("/settings/security");
  await expect(other).toHaveURL(/\/forbidden/);
  await viewer.close();
});
