import { describe, expect, it } from "vitest";
import { call, db, principal, unique } from "@/lib/testing/integration";
import { callAction, signInHttp } from "@/lib/testing/sessions";

/**
 * Accounts on the real server and database: passwords an admin sets must be changed before the
 * session can do anything; people change their own; admins revoke anyone's token. Each server
 * action checks who is calling (the authorization matrix's rows for these actions).
 */
const PASSWORD = "integration-password";

async function person(role: "viewer" | "reviewer" | "admin") {
  const p = await principal(role, role === "viewer" ? ["read"] : ["read", "review"]);
  const { cookie } = await signInHttp(p.email, PASSWORD);
  return { ...p, cookie: cookie! };
}

const userOf = async (email: string) => (await db()).user.findUniqueOrThrow({ where: { email } });

describe("passwords an admin sets", () => {
  it("a user added by an admin must change the password first: until then the session opens nothing and calls no API", async () => {
    const admin = await person("admin");
    const email = `${unique("added")}@itest.example`;
    const added = await callAction("addUserAction", { email, password: "set-by-the-admin", role: "reviewer" }, admin.cookie);
    expect(added.text).toContain(`Added ${email} as reviewer`);
    expect((await userOf(email)).mustChangePassword).toBe(true);

    const { cookie } = await signInHttp(email, "set-by-the-admin");
    expect(cookie).toBeTruthy();
    expect((await call("/api/v1/operations?limit=1", { headers: { cookie: cookie! } })).status).toBe(401);
    const page = await fetch(new URL("/p/default/operations", (await import("@/lib/testing/integration")).baseUrl), { headers: { cookie: cookie! }, redirect: "manual" });
    expect(page.headers.get("location") ?? (await page.text())).toContain("/password");
    // Another action is refused as signed out; creating a token would have been a way around.
    const token = await callAction("createTokenAction", { name: "escape", scopes: ["read"] }, cookie);
    expect(token.location).toMatch(/\/login/);
    expect(await (await db()).apiToken.count({ where: { user: { email } } })).toBe(0);

    const wrong = await callAction("changePasswordAction", { current: "not it at all", next: "my-own-password-1", confirm: "my-own-password-1" }, cookie, "/password");
    expect(wrong.text).toContain("The current password is not right.");
    const changed = await callAction("changePasswordAction", { current: "set-by-the-admin", next: "my-own-password-1", confirm: "my-own-password-1" }, cookie, "/password");
    // On to the overview, in the default project (an action's redirect lands where the page is now).
    expect(changed.location).toBe("/p/default");
    expect((await userOf(email)).mustChangePassword).toBe(false);
    expect((await call("/api/v1/operations?limit=1", { headers: { cookie: cookie! } })).status).toBe(200);
    expect((await signInHttp(email, "set-by-the-admin")).cookie).toBeFalsy();
    expect((await signInHttp(email, "my-own-password-1")).cookie).toBeTruthy();
    const events = await (await db()).instanceEvent.findMany({ where: { payload: { contains: email } }, orderBy: { seq: "asc" } });
    expect(events.map((e) => JSON.parse(e.payload).type)).toEqual(expect.arrayContaining(["user.created", "password.changed"]));
  });

  it("an admin's reset ends the user's sessions and makes them choose again; only admins may reset", async () => {
    const admin = await person("admin");
    const user = await person("viewer");
    const id = (await userOf(user.email)).id;
    const reviewer = await person("reviewer");
    const refused = await callAction("setPasswordAction", { id, password: "reviewer-chose-this" }, reviewer.cookie, "/settings/users");
    expect(refused.text).toContain("You may not do this.");
    const short = await callAction("setPasswordAction", { id, password: "short" }, admin.cookie, "/settings/users");
    expect(short.text).toContain("Password must be at least 12 characters.");
    const before = await userOf(user.email);
    const reset = await callAction("setPasswordAction", { id, password: "the-admin-reset-it" }, admin.cookie, "/settings/users");
    expect(reset.text).toContain(`Set a new password for ${user.email}`);
    const after = await userOf(user.email);
    expect(after.mustChangePassword).toBe(true);
    expect(after.sessionVersion).toBe(before.sessionVersion + 1);
    expect((await call("/api/v1/operations?limit=1", { headers: { cookie: user.cookie } })).status).toBe(401);
    expect((await signInHttp(user.email, PASSWORD)).cookie).toBeFalsy();
  });

  it("people change their own password only knowing the current one, and never to the same or too short", async () => {
    const me = await person("viewer");
    const anon = await callAction("changePasswordAction", { current: PASSWORD, next: "whatever-long-enough", confirm: "whatever-long-enough" }, null, "/settings/account");
    expect(anon.location).toMatch(/\/login/);
    const same = await callAction("changePasswordAction", { current: PASSWORD, next: PASSWORD, confirm: PASSWORD }, me.cookie, "/settings/account");
    expect(same.text).toContain("The new password must differ from the current one.");
    const differ = await callAction("changePasswordAction", { current: PASSWORD, next: "new-password-one", confirm: "new-password-two" }, me.cookie, "/settings/account");
    expect(differ.text).toContain("The two new passwords differ.");
    const ok = await callAction("changePasswordAction", { current: PASSWORD, next: "new-password-one", confirm: "new-password-one" }, me.cookie, "/settings/account");
    expect(ok.text).toContain("Password changed.");
    // The session that changed it stays signed in.
    expect((await call("/api/v1/operations?limit=1", { headers: { cookie: me.cookie } })).status).toBe(200);
    expect((await signInHttp(me.email, "new-password-one")).cookie).toBeTruthy();
  });
});

describe("admins and everyone's tokens", () => {
  it("only an admin revokes another user's token; the owner's own revoke still works", async () => {
    const admin = await person("admin");
    const reviewer = await person("reviewer");
    const victim = await person("viewer");
    const tokenId = (await (await db()).apiToken.findFirstOrThrow({ where: { user: { email: victim.email }, revokedAt: null } })).id;
    for (const cookie of [reviewer.cookie, victim.cookie]) {
      const r = await callAction("revokeAnyTokenAction", { id: tokenId }, cookie);
      expect(r.text).toContain("You may not do this.");
    }
    expect((await call("/api/v1/operations?limit=1", { headers: { authorization: `Bearer ${victim.token}` } })).status).toBe(200);
    const done = await callAction("revokeAnyTokenAction", { id: tokenId }, admin.cookie);
    expect(done.text).toContain(`Revoked ${victim.email}'s token`);
    expect((await call("/api/v1/operations?limit=1", { headers: { authorization: `Bearer ${victim.token}` } })).status).toBe(401);
    const twice = await callAction("revokeAnyTokenAction", { id: tokenId }, admin.cookie);
    expect(twice.text).toContain("No such token.");
  });
});
