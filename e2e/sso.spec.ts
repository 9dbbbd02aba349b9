/**
 * Single sign-on end to end: a real OpenID provider (oidc-provider) started here on 127.0.0.1, the
 * real Reconcile server started here with AUTH_OIDC_ISSUER/ID/SECRET pointing at it, and Chromium
 * driving the whole flow through the sign-in page, the provider's page and back.
 * SSO_DEBUG=1 prints the server's log and the provider's requests.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { startOidcProvider, type TestProvider } from "../lib/testing/oidc-provider";
import { freePort } from "../lib/testing/ports";

let idp: TestProvider;
let server: ChildProcess;
let base: string;
let dbFile: string;
let log = "";

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  test.setTimeout(120_000);
  const [idpPort, appPort] = [await freePort(), await freePort()];
  base = `http://127.0.0.1:${appPort}`;
  idp = await startOidcProvider({ port: idpPort, clientId: "reconcile-e2e", clientSecret: "e2e-client-secret-0123456789", redirectUri: `${base}/api/auth/callback/oidc` });
  dbFile = path.join(mkdtempSync(path.join(os.tmpdir(), "reconcile-e2e-sso-")), "e2e.db");
  server = spawn(process.execPath, ["node_modules/tsx/dist/cli.mjs", "--conditions=react-server", "lib/testing/e2e-server.ts", String(appPort), "demo"], {
    env: {
      ...process.env,
      E2E_DATABASE_FILE: dbFile,
      AUTH_OIDC_ISSUER: idp.issuer,
      AUTH_OIDC_ID: "reconcile-e2e",
      AUTH_OIDC_SECRET: "e2e-client-secret-0123456789",
      AUTH_OIDC_NAME: "Test SSO",
      AUTH_OIDC_ALLOWED_DOMAINS: "corp.test, @reconcile.test",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  server.stdout!.on("data", (d) => (log += d));
  server.stderr!.on("data", (d) => (log += d));
  const deadline = Date.now() + 100_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the server exited:\n${log}`);
    try {
      if ((await fetch(`${base}/api/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});

test.afterAll(async () => {
  if (process.env.SSO_DEBUG) console.log(log);
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once("exit", r));
    server.kill("SIGTERM");
    await exited;
  }
  await idp?.stop();
});

function query<T>(sql: string, ...params: unknown[]): T[] {
  const db = new Database(dbFile, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** A fresh browser (no session here or at the provider): Reconcile's sign-in page, the SSO button, the provider's form. */
async function ssoSignIn(browser: Browser, subject: string, start = "/"): Promise<Page> {
  const context = await browser.newContext({ baseURL: base });
  const page = await context.newPage();
  await page.goto(start);
  await expect(page.getByRole("heading", { name: "Sign in", exact: true })).toBeVisible();
  await page.getByRole("button", { name: "Sign in with Test SSO" }).click();
  await expect(page.getByRole("heading", { name: "Test identity provider" })).toBeVisible();
  expect(new URL(page.url()).origin).toBe(idp.issuer);
  await page.getByLabel("Subject").fill(subject);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL((url) => url.origin === base);
  return page;
}

test("a verified email signs in (back where it started), and the identity is linked by issuer + subject", async ({ browser }) => {
  idp.account("alice-sub", { email: "Alice@corp.test", email_verified: true });
  const page = await ssoSignIn(browser, "alice-sub", "/operations");
  await expect(page).toHaveURL(/\/operations$/);
  await expect(page.getByText("alice@corp.test · viewer")).toBeVisible();
  const linked = query<{ issuer: string; subject: string; email: string }>(
    "SELECT i.issuer, i.subject, u.email FROM oidc_identities i JOIN users u ON u.id = i.user_id WHERE i.subject = ?",
    "alice-sub",
  );
  expect(linked).toEqual([{ issuer: idp.issuer, subject: "alice-sub", email: "alice@corp.test" }]);
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login/);
  await page.context().close();
});

test("an unverified email is refused, and no account is made", async ({ browser }) => {
  idp.account("uma-sub", { email: "uma@corp.test", email_verified: false });
  const page = await ssoSignIn(browser, "uma-sub");
  await expect(page).toHaveURL(/\/login/);
  await expect(page.getByRole("alert").filter({ hasText: /not verified your email address/ })).toBeVisible();
  expect(query("SELECT id FROM users WHERE email = ?", "uma@corp.test")).toEqual([]);
  // email_verified must be the boolean true, not a string that says so.
  idp.account("uma-sub", { email: "uma@corp.test", email_verified: "true" });
  const again = await ssoSignIn(browser, "uma-sub");
  await expect(again.getByRole("alert").filter({ hasText: /not verified your email address/ })).toBeVisible();
  await page.context().close();
  await again.context().close();
});

test("an email outside AUTH_OIDC_ALLOWED_DOMAINS is refused", async ({ browser }) => {
  idp.account("eve-sub", { email: "eve@elsewhere.test", email_verified: true });
  const page = await ssoSignIn(browser, "eve-sub");
  await expect(page).toHaveURL(/\/login/);
  await expect(page.getByRole("alert").filter({ hasText: /email domain may not sign in here/ })).toBeVisible();
  expect(query("SELECT id FROM users WHERE email = ?", "eve@elsewhere.test")).toEqual([]);
  await page.context().close();
});

test("linked by subject: a later email change at the provider takes over nothing, and another subject with the email is refused", async ({ browser }) => {
  // alice (linked in the first test) changes her email at the provider to the admin's.
  idp.account("alice-sub", { email: "admin@reconcile.test", email_verified: true });
  const page = await ssoSignIn(browser, "alice-sub");
  await expect(page.getByText("alice@corp.test · viewer")).toBeVisible();
  await expect(page.getByText("admin@reconcile.test")).toHaveCount(0);
  await page.context().close();

  // Someone else at the provider, now with alice's email (verified): not alice's account.
  idp.account("mallory-sub", { email: "alice@corp.test", email_verified: true });
  const mallory = await ssoSignIn(browser, "mallory-sub");
  await expect(mallory).toHaveURL(/\/login/);
  await expect(mallory.getByRole("alert").filter({ hasText: /linked to another identity/ })).toBeVisible();
  expect(query("SELECT subject FROM oidc_identities ORDER BY subject")).toEqual([{ subject: "alice-sub" }]);
  await mallory.context().close();

  // Every refusal and sign-in is in the audit chain, and the refused identifiers that name nobody only as digests.
  const events = query<{ payload: string }>("SELECT payload FROM instance_events ORDER BY seq").map((r) => JSON.parse(r.payload));
  const sso = events.filter((e) => e.method === "oidc" || e.type === "identity.linked");
  expect(sso.map((e) => [e.type, e.reason ?? null])).toEqual([
    ["identity.linked", null],
    ["signin.succeeded", null],
    ["signin.failed", "email not verified by the identity provider"],
    ["signin.failed", "email not verified by the identity provider"],
    ["signin.failed", "email domain not allowed"],
    ["signin.succeeded", null],
    ["signin.failed", "account linked to another identity of this provider"],
  ]);
  expect(JSON.stringify(events)).not.toContain("eve@elsewhere.test");
});
