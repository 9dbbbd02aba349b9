import { expect, test } from "@playwright/test";
import { demo, noSeriousA11yViolations, shot, signIn } from "./helpers";

const phone = { width: 390, height: 844 };
const ESSAY_OP = "op-2026-08-28-x-post-001";

test("an admin creates a verifier, sees each refusal, dry-runs it against an operation and disables it, all from the keyboard", async ({ page }) => {
  await signIn(page, demo.admin.email, demo.admin.password);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Verifiers" }).click();
  await expect(page.getByRole("heading", { name: "Verifiers", level: 1 })).toBeVisible();
  // The empty state says what a verifier is for.
  await expect(page.getByText("No verifiers yet.")).toBeVisible();
  // Which secrets a verifier may send here: the operator's list (RECONCILE_VERIFIER_ENV).
  await expect(page.getByTestId("verifier-secret-names")).toHaveText("Variables verifiers may send on this server: X_READ_TOKEN. Its operator lists them in RECONCILE_VERIFIER_ENV.");
  await noSeriousA11yViolations(page);
  await shot(page, "verifiers-empty-desktop");

  await page.getByRole("button", { name: "New verifier" }).click();
  const editor = page.getByLabel("Definition (JSON)");
  await expect(editor).toHaveValue(/"name": "post-exists"/);

  // A host that is not allowed, and a credential written as text: each named, nothing saved.
  const template = await editor.inputValue();
  await editor.fill(template.replace("https://api.example.com/2/tweets", "https://elsewhere.example/2/tweets").replace("Bearer {env.X_READ_TOKEN}", "Bearer abc123"));
  await editor.press("Control+Enter");
  const problems = page.getByRole("alert").filter({ hasText: "The definition was not saved" });
  await expect(problems).toBeVisible();
  await expect(problems).toContainText("request.url: its host elsewhere.example is not in allow_hosts (api.example.com)");
  await expect(problems).toContainText("request.headers.Authorization carries a credential");
  await shot(page, "verifiers-refused-desktop");

  // The template as it is: saved as version 1, disabled (an example must not start reading).
  await editor.fill(template);
  await page.getByRole("button", { name: "Save as new version" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Saved post-exists as version 1." })).toBeVisible();
  const row = page.getByRole("row", { name: /post-exists/ });
  await expect(row).toContainText("social.publish");
  await expect(row).toContainText("disabled");
  await page.getByRole("button", { name: "Enable post-exists" }).click();
  await expect(page.getByRole("status").filter({ hasText: "post-exists is enabled (version 2)." })).toBeVisible();
  await expect(row).toContainText("2 of 2");
  await expect(row).not.toContainText("disabled");

  // A dry run against the essay's operation: this server has no X_READ_TOKEN, so nothing is sent.
  await page.getByLabel("Operation id").fill(ESSAY_OP);
  await page.getByLabel("Operation id").press("Enter");
  const result = page.getByTestId("dry-run-result");
  await expect(result).toContainText("not sent: the request could not be filled in");
  await expect(result.getByRole("alert")).toContainText("the environment variable X_READ_TOKEN is not set on this server ({env.X_READ_TOKEN})");
  // A draft without the secret that asks over plain http: the guarded client's refusal, nothing recorded.
  await editor.fill(template.replace("https://api.example.com", "http://api.example.com").replace('"Authorization": "Bearer {env.X_READ_TOKEN}"', '"Accept": "application/json"'));
  await page.getByRole("button", { name: "Run dry run" }).click();
  await expect(result).toContainText("GET http://api.example.com/2/tweets/gw-x-20260828-7731");
  await expect(result.getByRole("alert")).toContainText("scheme_not_allowed: plain http to api.example.com is not allowed");
  await expect(result).toContainText("would record");
  await expect(result).toContainText("unavailable");
  await noSeriousA11yViolations(page);
  await shot(page, "verifiers-dry-run-desktop");

  // Disable: a new version, nothing edited.
  await page.getByRole("button", { name: "Close" }).click();
  await page.getByRole("button", { name: "Disable post-exists" }).click();
  await expect(page.getByRole("status").filter({ hasText: "post-exists is disabled (version 3)." })).toBeVisible();
  await expect(row).toContainText("3 of 3");
  await expect(row).toContainText("disabled");

  // A stored secret, from the keyboard: its value is typed once and never shown again; a delete asks twice.
  const secretForm = page.getByRole("form", { name: "Store a secret" });
  await expect(page.getByText("No secrets stored.")).toBeVisible();
  await secretForm.getByLabel("Name").fill("X_WRITE_TOKEN");
  await secretForm.getByLabel("Value").fill("typed-once-4242");
  await secretForm.getByLabel("Value").press("Enter");
  await expect(page.getByRole("status").filter({ hasText: "Stored X_WRITE_TOKEN. Verifiers send it as {secret.X_WRITE_TOKEN}." })).toBeVisible();
  const stored = page.getByRole("list", { name: "Stored secrets" }).getByRole("listitem");
  await expect(stored).toContainText("X_WRITE_TOKEN");
  await expect(stored).toContainText("no enabled verifier sends it");
  await expect(page.locator("body")).not.toContainText("typed-once-4242");
  await shot(page, "verifiers-secrets-desktop");
  await page.getByRole("button", { name: "Delete X_WRITE_TOKEN" }).click();
  await page.getByRole("button", { name: "Confirm deleting X_WRITE_TOKEN" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Deleted X_WRITE_TOKEN." })).toBeVisible();
  await expect(page.getByText("No secrets stored.")).toBeVisible();

  await page.setViewportSize(phone);
  const card = page.getByRole("list", { name: "Verifiers, latest version of each" }).getByRole("listitem");
  await expect(card).toContainText("version 3 of 3 · disabled");
  await expect(page.getByRole("button", { name: "Enable post-exists" })).toBeVisible();
  await shot(page, "verifiers-list-phone");
  await page.getByRole("button", { name: "Edit post-exists" }).click();
  await expect(editor).toHaveValue(/"enabled": false/);
  await shot(page, "verifiers-editor-phone");
  await noSeriousA11yViolations(page);
});

test("reviewers and viewers see no Verifiers link, and the page refuses them", async ({ page }) => {
  await signIn(page, demo.reviewer.email, demo.reviewer.password);
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Verifiers" })).toHaveCount(0);
  await page.goto("/settings/verifiers");
  await expect(page.getByRole("heading", { name: "Verifiers", level: 1 })).toHaveCount(0);
});
