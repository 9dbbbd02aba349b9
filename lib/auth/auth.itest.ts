import { beforeAll, describe, expect, it } from "vitest";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";
import { callAction, signInHttp } from "@/lib/testing/sessions";

const PASSWORD = "integration-password";

async function person(role: "viewer" | "reviewer" | "admin") {
  const p = await principal(role, role === "viewer" ? ["ingest", "read", "export"] : ["ingest", "read", "export", "review"]);
  const { cookie } = await signInHttp(p.email, PASSWORD);
  expect(cookie).toBeTruthy();
  return { ...p, cookie: cookie! };
}

async function userId(email: string) {
  return (await (await db()).user.findUniqueOrThrow({ where: { email } })).id;
}

async function disable(email: string) {
  const { updateUser } = await import("@/lib/store/users");
  await updateUser({ id: await userId(email), disabled: true, actor: "itest" });
}

const record = () => ({ operation_id: unique("op-authz"), receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } });

describe("the authorization matrix (route handlers)", () => {
  type Who = { name: string; headers: () => Record<string, string> };
  const who: Record<string, Who> = {};
  let opId: string;
  let ingestToken: string;
  beforeAll(async () => {
    const viewer = await person("viewer");
    const reviewer = await person("reviewer");
    const admin = await person("admin");
    const tokens = Object.fromEntries(
      await Promise.all(
        (["ingest", "verify", "read", "export", "review"] as const).map(async (s) => [s, (await principal("reviewer", [s])).token] as const),
      ),
    );
    const gone = await person("viewer");
    await disable(gone.email);
    const origin = (await import("@/lib/testing/integration")).baseUrl;
    const session = (cookie: string) => () => ({ cookie, origin });
    Object.assign(who, {
      anonymous: { name: "anonymous", headers: () => ({}) },
      viewer: { name: "viewer session", headers: session(viewer.cookie) },
      reviewer: { name: "reviewer session", headers: session(reviewer.cookie) },
      admin: { name: "admin session", headers: session(admin.cookie) },
      ...Object.fromEntries(Object.entries(tokens).map(([s, t]) => [`token:${s}`, { name: `${s} token`, headers: () => ({ authorization: `Bearer ${t}` }) }])),
      disabledSession: { name: "disabled user's session", headers: session(gone.cookie) },
      disabledToken: { name: "disabled user's token", headers: () => ({ authorization: `Bearer ${gone.token}` }) },
      badToken: { name: "unknown token", headers: () => ({ authorization: "Bearer rcl_" + "x".repeat(43) }) },
    });
    ingestToken = tokens.ingest;
    opId = (await ingest(tokens.ingest, record())).body.operation_id;
  });

  // ingest: a receipt; read: a canonical read alone (TRUST.md: needs verify); claim: GET, then
  // POST and DELETE of the claim on an operation of its own (review).
  type Row = { ingest: number; read: number; list: number; one: number; health: number; claim: number; take: number; release: number };
  const expected: Record<string, Row> = {
    anonymous: { ingest: 401, read: 401, list: 401, one: 401, health: 200, claim: 401, take: 401, release: 401 },
    viewer: { ingest: 201, read: 403, list: 200, one: 200, health: 200, claim: 200, take: 403, release: 403 },
    reviewer: { ingest: 201, read: 201, list: 200, one: 200, health: 200, claim: 200, take: 200, release: 200 },
    admin: { ingest: 201, read: 201, list: 200, one: 200, health: 200, claim: 200, take: 200, release: 200 },
    "token:ingest": { ingest: 201, read: 403, list: 403, one: 403, health: 200, claim: 403, take: 403, release: 403 },
    "token:verify": { ingest: 403, read: 201, list: 403, one: 403, health: 200, claim: 403, take: 403, release: 403 },
    "token:read": { ingest: 403, read: 403, list: 200, one: 200, health: 200, claim: 200, take: 403, release: 403 },
    "token:export": { ingest: 403, read: 403, list: 403, one: 403, health: 200, claim: 403, take: 403, release: 403 },
    "token:review": { ingest: 403, read: 403, list: 403, one: 403, health: 200, claim: 403, take: 200, release: 200 },
    disabledSession: { ingest: 401, read: 401, list: 401, one: 401, health: 200, claim: 401, take: 401, release: 401 },
    disabledToken: { ingest: 401, read: 401, list: 401, one: 401, health: 200, claim: 401, take: 401, release: 401 },
    badToken: { ingest: 401, read: 401, list: 401, one: 401, health: 200, claim: 401, take: 401, release: 401 },
  };
  const readRecord = () => ({ operation_id: unique("op-authz"), canonical_read: { status: "absent", observed_at: "2026-08-28T10:05:00Z" } });

  for (const subrequest of [false, true]) {
    it.each(Object.keys(expected))(`%s${subrequest ? " with x-middleware-subrequest" : ""}`, async (key) => {
      const extra: Record<string, string> = subrequest ? { "x-middleware-subrequest": "middleware:middleware:middleware:middleware:middleware" } : {};
      const h = (): Record<string, string> => ({ ...who[key].headers(), ...extra });
      const mine = (await ingest(ingestToken, record())).body.operation_id;
      const got = {
        ingest: (await call("/api/v1/receipts", { body: record(), headers: h() })).status,
        read: (await call("/api/v1/receipts", { body: readRecord(), headers: h() })).status,
        list: (await call("/api/v1/operations?limit=1", { headers: h() })).status,
        one: (await call(`/api/v1/operations/${opId}`, { headers: h() })).status,
        health: (await call("/api/health", { headers: h() })).status,
        claim: (await call(`/api/v1/operations/${opId}/claim`, { headers: h() })).status,
        take: (await call(`/api/v1/operations/${mine}/claim`, { body: {}, headers: h() })).status,
        release: (await call(`/api/v1/operations/${mine}/claim`, { method: "DELETE", headers: h() })).status,
      };
      expect(got).toEqual(expected[key]);
    });
  }

  it("a session's cross-site write is refused (CSRF), and nothing is stored", async () => {
    const cookie = who.viewer.headers().cookie;
    const r = record();
    const res = await call("/api/v1/receipts", { body: r, headers: { cookie, origin: "https://evil.example" } });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toMatch(/cross-site/);
    expect((await call(`/api/v1/operations/${r.operation_id}`, { headers: who.admin.headers() })).status).toBe(404);
  });

  it("a refused authorization is a security event in the chain", async () => {
    const before = await (await db()).chainRecord.count({ where: { kind: "security" } });
    expect((await call("/api/v1/operations", { headers: who["token:ingest"].headers() })).status).toBe(403);
    const events = await (await db()).chainRecord.findMany({ where: { kind: "security" }, orderBy: { seq: "desc" }, take: 1 });
    expect(await (await db()).chainRecord.count({ where: { kind: "security" } })).toBe(before + 1);
    expect(JSON.parse(events[0].payload)).toMatchObject({ type: "authorization.refused", permission: "operations:read", path: "/api/v1/operations" });
  });
});

describe("the authorization matrix (server actions)", () => {
  it("only admins add users or change roles; anyone signed in manages only their own tokens", async () => {
    const viewer = await person("viewer");
    const reviewer = await person("reviewer");
    const admin = await person("admin");
    const users = async () => (await db()).user.count();

    for (const [name, cookie] of [["anonymous", null], ["viewer", viewer.cookie], ["reviewer", reviewer.cookie]] as const) {
      const before = await users();
      const res = await callAction("addUserAction", { email: `${unique("x")}@itest.example`, password: "a-long-password", role: "admin" }, cookie);
      if (name === "anonymous") expect(res.location).toMatch(/\/login/);
      else expect(res.text).toContain("You may not do this.");
      expect(await users()).toBe(before);
      const role = await callAction("updateUserAction", { id: await userId(viewer.email), role: "admin" }, cookie);
      if (name !== "anonymous") expect(role.text).toContain("You may not do this.");
      expect((await (await db()).user.findUniqueOrThrow({ where: { email: viewer.email } })).role).toBe("viewer");
    }

    const before = await users();
    const added = await callAction("addUserAction", { email: `${unique("new")}@itest.example`, password: "a-long-password", role: "reviewer" }, admin.cookie);
    expect(added.text).toMatch(/Added .* as reviewer/);
    expect(await users()).toBe(before + 1);

    // Tokens: a viewer may create their own, never above their role, and cannot revoke others'.
    const tooHigh = await callAction("createTokenAction", { name: "x", scopes: ["review"] }, viewer.cookie);
    expect(tooHigh.text).toMatch(/cannot carry the scope review/);
    const own = await callAction("createTokenAction", { name: "mine", scopes: ["read"] }, viewer.cookie);
    expect(own.text).toMatch(/rcl_/);
    const othersToken = (await (await db()).apiToken.findFirstOrThrow({ where: { user: { email: admin.email } } })).id;
    const steal = await callAction("revokeTokenAction", { id: othersToken }, viewer.cookie);
    expect(steal.text).toContain("No such token.");
    expect((await (await db()).apiToken.findUniqueOrThrow({ where: { id: othersToken } })).revokedAt).toBeNull();
    const anon = await callAction("createTokenAction", { name: "x", scopes: ["read"] }, null);
    expect(anon.location).toMatch(/\/login/);
  });

  it("the last admin can be neither demoted nor disabled", async () => {
    const { updateUser } = await import("@/lib/store/users");
    const client = await db();
    const admins = await client.user.findMany({ where: { role: "admin", disabled: false } });
    // Leave exactly one enabled admin, then try to remove it.
    for (const a of admins.slice(1)) await updateUser({ id: a.id, role: "viewer", actor: "itest" });
    const last = await person("admin");
    const rest = await client.user.findMany({ where: { role: "admin", disabled: false, NOT: { email: last.email } } });
    for (const a of rest) await updateUser({ id: a.id, role: "viewer", actor: "itest" });
    const lastId = await userId(last.email);
    const demote = await callAction("updateUserAction", { id: lastId, role: "viewer" }, last.cookie);
    expect(demote.text).toContain("This is the last admin");
    const off = await callAction("updateUserAction", { id: lastId, disabled: "true" }, last.cookie);
    expect(off.text).toContain("This is the last admin");
    expect(await client.user.findUniqueOrThrow({ where: { id: lastId } })).toMatchObject({ role: "admin", disabled: false });
  });

  it("the first-admin action refuses once any user exists", async () => {
    const before = await (await db()).user.count();
    const res = await callAction("setupAction", { email: `${unique("late")}@itest.example`, password: "a-long-password", confirm: "a-long-password" }, null, "/setup");
    expect(res.text).toContain("already has an admin");
    expect(await (await db()).user.count()).toBe(before);
  });
});

describe("sign-in", () => {
  it("the 101st failure within the hour is refused; then even the right password is; another account is unaffected", async () => {
    const victim = await principal("viewer", ["read"]);
    const other = await principal("viewer", ["read"]);
    for (let i = 0; i < 100; i++) {
      const r = await signInHttp(victim.email, `wrong-${i}`, { "x-forwarded-for": `10.9.${Math.floor(i / 50)}.${i % 50}` });
      expect(r.location, `attempt ${i + 1}`).toMatch(/code=invalid/);
    }
    const refused = await signInHttp(victim.email, "wrong-again");
    expect(refused.location).toMatch(/code=throttled-(\d+)/);
    const right = await signInHttp(victim.email, PASSWORD);
    expect(right.cookie).toBeNull();
    expect(right.location).toMatch(/code=throttled-(60|59)/);
    const unaffected = await signInHttp(other.email, PASSWORD);
    expect(unaffected.cookie).toBeTruthy();
  });

  it("sign-in success and failure are security events with the source address", async () => {
    const p = await principal("viewer", ["read"]);
    await signInHttp(p.email, "nope", { "x-forwarded-for": "203.0.113.7" });
    await signInHttp(p.email, PASSWORD, { "x-forwarded-for": "203.0.113.7" });
    const events = (await (await db()).chainRecord.findMany({ where: { kind: "security", actor: p.email }, orderBy: { seq: "asc" } })).map((e) => JSON.parse(e.payload));
    expect(events.map((e) => e.type)).toEqual(["signin.failed", "signin.succeeded"]);
    expect(events.every((e) => e.source === "203.0.113.7")).toBe(true);
  });

  it("disabling a user cuts off their session and their tokens at once", async () => {
    const p = await person("viewer");
    const admin = await person("admin");
    expect((await call("/api/v1/operations?limit=1", { headers: { cookie: p.cookie } })).status).toBe(200);
    expect((await call("/api/v1/operations?limit=1", { token: p.token })).status).toBe(200);
    const res = await callAction("updateUserAction", { id: await userId(p.email), disabled: "true" }, admin.cookie, "/settings/users");
    expect(res.text).toContain("is now disabled");
    expect((await call("/api/v1/operations?limit=1", { headers: { cookie: p.cookie } })).status).toBe(401);
    expect((await call("/api/v1/operations?limit=1", { token: p.token })).status).toBe(401);
    expect((await signInHttp(p.email, PASSWORD)).cookie).toBeNull();
  });
});
