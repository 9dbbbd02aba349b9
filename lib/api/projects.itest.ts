import { beforeAll, describe, expect, it } from "vitest";
import { call, ingest, principal, unique } from "@/lib/testing/integration";

/**
 * Projects over the real API and database (docs/API.md "Projects"): an instance admin
 * creates one (its database made by the server's job), a project admin adds members, tokens
 * land in their own project, and nothing crosses: another project's operation, trajectory,
 * search hit, export line and token are 404 or absent, even under the same operation id.
 */
let admin: { email: string; token: string };
let slug: string;
let other: { email: string; token: string };

const store = {
  tokens: () => import("@/lib/store/people/api-tokens"),
  projects: () => import("@/lib/store/people/projects"),
  users: () => import("@/lib/store/people/users"),
};

/** A record claiming success for `tool`, read back as present: verified. */
const record = (id: string, tool: string, trajectory: string) => ({
  operation_id: id,
  tool,
  trajectory_id: trajectory,
  intent: { target: "a ledger", effect: `${tool} once` },
  receipt: { status: "accepted", observed_at: "2026-11-01T10:00:00Z" },
  canonical_read: { status: "match", observed_at: "2026-11-01T10:00:05Z", evidence: `${tool} found` },
});

async function tokenIn(email: string, projectSlug: string, scopes: string[]) {
  const p = await (await store.projects()).projectBySlug(projectSlug);
  return (await (await store.tokens()).createApiToken({ email, name: "itest", scopes, project: p!.id, actor: "itest" })).token;
}

beforeAll(async () => {
  admin = await principal("admin", ["ingest", "verify", "read", "export", "admin"]);
  slug = unique("proj").toLowerCase();
  const made = await call("/api/v1/projects", { token: admin.token, body: { slug, name: "Billing agents" } });
  expect(made.status, made.text).toBe(201);
  expect(made.body).toMatchObject({ slug, name: "Billing agents", ready: true, url: `/p/${slug}` });
  // A user with no role in the project yet: a viewer of the default project.
  other = await principal("viewer", ["read"]);
}, 60_000);

describe("projects and their members", () => {
  it("only an instance admin lists or creates projects", async () => {
    const listed = await call("/api/v1/projects", { token: admin.token });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((p: { slug: string }) => p.slug)).toEqual(expect.arrayContaining(["default", slug]));
    const viewer = await principal("viewer", ["read"]);
    expect((await call("/api/v1/projects", { token: viewer.token })).status).toBe(403);
    const refused = await call("/api/v1/projects", { token: viewer.token, body: { slug: unique("nope").toLowerCase() } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/instance admin/);
  });

  it("refuses a slug that is taken, reserved or malformed, saying which", async () => {
    const taken = await call("/api/v1/projects", { token: admin.token, body: { slug } });
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toMatch(/already exists/);
    const reserved = await call("/api/v1/projects", { token: admin.token, body: { slug: "api" } });
    expect(reserved.status).toBe(422);
    expect(reserved.body.error.message).toMatch(/reserved/);
    const upper = await call("/api/v1/projects", { token: admin.token, body: { slug: "Billing" } });
    expect(upper.status).toBe(422);
    expect(upper.body.error.message).toMatch(/lower-case/);
    const extra = await call("/api/v1/projects", { token: admin.token, body: { slug: unique("x").toLowerCase(), owner: "me" } });
    expect(extra.status).toBe(422);
    expect(extra.body.error.message).toMatch(/owner/);
  });

  it("a project admin adds a member; the member's token works in that project only", async () => {
    const added = await call(`/api/v1/projects/${slug}/members`, { token: admin.token, body: { email: other.email, role: "reviewer" } });
    // The admin's token is the default project's: another project's members route is not its.
    expect(added.status).toBe(404);
    const adminInProject = await tokenIn(admin.email, slug, ["admin", "read"]);
    const ok = await call(`/api/v1/projects/${slug}/members`, { token: adminInProject, body: { email: other.email, role: "reviewer" } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ email: other.email, role: "reviewer", instance_admin: false });
    const members = await call(`/api/v1/projects/${slug}/members`, { token: adminInProject });
    expect(members.body.items.map((m: { email: string }) => m.email)).toEqual(expect.arrayContaining([other.email, admin.email]));

    const token = await tokenIn(other.email, slug, ["read"]);
    expect((await call("/api/v1/operations?limit=1", { token })).status).toBe(200);
    // A reviewer does not manage members.
    expect((await call(`/api/v1/projects/${slug}/members`, { token })).status).toBe(403);

    const gone = await call(`/api/v1/projects/${slug}/members/${encodeURIComponent(other.email)}`, { token: adminInProject, method: "DELETE" });
    expect(gone.status).toBe(204);
    // Out of the project: the token names a project that no longer exists for its owner.
    expect((await call("/api/v1/operations?limit=1", { token })).status).toBe(401);
  });

  it("a user who is in no project of that name cannot make a token for it", async () => {
    const outsider = await principal("viewer", ["read"]);
    await expect(tokenIn(outsider.email, slug, ["read"])).rejects.toThrow(/no such project/);
  });
});

describe("nothing crosses a project", () => {
  it("the same operation id in two projects is two operations, each seen only in its own", async () => {
    const inProject = await tokenIn(admin.email, slug, ["ingest", "verify", "read", "export"]);
    const id = unique("op-shared");
    const trajectory = unique("traj");
    const first = await ingest(admin.token, record(id, "default.tool", trajectory));
    expect(first.status, first.text).toBe(201);
    const second = await ingest(inProject, record(id, "billing.charge", trajectory));
    // Not a duplicate nor a conflict: the id is new in this project.
    expect(second.status, second.text).toBe(201);
    expect(second.body.duplicate).toBe(false);

    const here = await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token: inProject });
    const there = await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token: admin.token });
    expect(here.body.tool).toBe("billing.charge");
    expect(there.body.tool).toBe("default.tool");

    const onlyHere = unique("op-only");
    expect((await ingest(inProject, record(onlyHere, "billing.refund", trajectory))).status).toBe(201);
    expect((await call(`/api/v1/operations/${encodeURIComponent(onlyHere)}`, { token: admin.token })).status).toBe(404);
    expect((await call(`/api/v1/operations/${encodeURIComponent(onlyHere)}/stages/1`, { token: admin.token })).status).toBe(404);
    const trajectoryThere = await call(`/api/v1/trajectories/${encodeURIComponent(trajectory)}`, { token: admin.token });
    expect(JSON.stringify(trajectoryThere.body)).not.toContain(onlyHere);
    const searched = await call(`/api/v1/operations?q=${encodeURIComponent("billing.refund")}`, { token: admin.token });
    expect(JSON.stringify(searched.body)).not.toContain(onlyHere);
    const listed = await call(`/api/v1/operations?tool=billing.refund`, { token: admin.token });
    expect(listed.body.items).toEqual([]);

    // The project's export holds its records alone, and verifies alone.
    const exported = await call("/api/v1/audit/export?format=ndjson", { token: inProject });
    expect(exported.status).toBe(200);
    const lines = exported.text.trim().split("\n").map((l) => JSON.parse(l));
    const records = lines.filter((l) => typeof l.seq === "number");
    expect(records.map((r) => r.operation_id)).toEqual(expect.arrayContaining([id, onlyHere]));
    expect(records.some((r) => r.payload?.tool === "default.tool" || JSON.stringify(r).includes("default.tool"))).toBe(false);
    const defaultExport = await call(`/api/v1/audit/export?format=ndjson&operation_id=${encodeURIComponent(onlyHere)}`, { token: admin.token });
    expect(defaultExport.text).not.toContain("billing.refund");
  });

  it("secrets stop at the project line: one project's stored verifier secret is not another's", async () => {
    const name = `CROSS_${unique("s").replace(/\W/g, "_").toUpperCase()}`;
    expect((await call(`/api/v1/verifier-secrets/${name}`, { method: "PUT", token: admin.token, body: { value: "default-project-credential" } })).status).toBe(201);
    const inProject = await tokenIn(admin.email, slug, ["admin"]);
    const theirs = await call("/api/v1/verifier-secrets", { token: inProject });
    expect(theirs.status).toBe(200);
    expect(theirs.text).not.toContain(name);
    // Deleting it from the other project finds nothing there; it stays in its own.
    expect((await call(`/api/v1/verifier-secrets/${name}`, { method: "DELETE", token: inProject })).status).toBe(404);
    expect((await call("/api/v1/verifier-secrets", { token: admin.token })).text).toContain(name);
  });

  it("its admins rename a project and set its retention; its members read it; nobody else sees it", async () => {
    const adminHere = await tokenIn(admin.email, slug, ["read", "admin"]);
    const at = `/api/v1/projects/${slug}`;
    const read = await call(at, { token: adminHere });
    expect(read.status, read.text).toBe(200);
    expect(read.body).toMatchObject({ slug, url: `/p/${slug}`, retention_days: null, retention: null });
    const name = `Billing agents ${unique("n")}`;
    const renamed = await call(at, { token: adminHere, method: "PATCH", body: { name } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ slug, name, url: `/p/${slug}` });
    expect((await call(at, { token: adminHere })).body.name).toBe(name);
    // This server has no archive (RECONCILE_ARCHIVE_URL): a number of days would have nowhere to seal to.
    const days = await call(at, { token: adminHere, method: "PATCH", body: { retention_days: 30 } });
    expect(days.status).toBe(422);
    expect(days.body.error.message).toMatch(/^retention_days: this server has no archive/);
    expect((await call(at, { token: adminHere })).body.retention_days).toBeNull();
    expect((await call(at, { token: adminHere, method: "PATCH", body: { retention_days: null } })).status).toBe(200);
    expect((await call(at, { token: adminHere, method: "PATCH", body: {} })).status).toBe(422);
    expect((await call(at, { token: adminHere, method: "PATCH", body: { slug: "renamed" } })).status).toBe(422);
    expect((await call(at, { token: adminHere, method: "PATCH", body: { name: "  " } })).status).toBe(422);
    expect((await call(at, { token: adminHere, method: "POST", body: { name } })).status).toBe(405);

    // A reviewer here reads it and cannot change it.
    const reviewer = await principal("viewer", ["read"]);
    expect((await call(`${at}/members`, { token: adminHere, body: { email: reviewer.email, role: "reviewer" } })).status).toBe(200);
    const reviewerHere = await tokenIn(reviewer.email, slug, ["read", "review"]);
    expect((await call(at, { token: reviewerHere })).status).toBe(200);
    const refused = await call(at, { token: reviewerHere, method: "PATCH", body: { name: "Mine now" } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/change a project's name or retention/);
    // Another project's token: the project does not exist for it.
    expect((await call(at, { token: other.token })).status).toBe(404);
    expect((await call(at, { token: admin.token, method: "PATCH", body: { name: "x" } })).status).toBe(404);

    // The rename is a security event of the instance's own trail (no project's), naming what changed.
    const trail = await call("/api/v1/security-events", { token: admin.token });
    expect(trail.status, trail.text).toBe(200);
    const changed = trail.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((l) => l.payload?.type === "project.changed" && l.payload.project === slug);
    expect((await call("/api/v1/audit/export?format=ndjson", { token: admin.token })).text).not.toContain(`"project":"${slug}"`);
    expect(changed.map((l) => l.payload.name?.to)).toContain(name);
  });

  it("a token sent to another project's path is 404, not 403", async () => {
    const r = await call(`/p/${slug}/api/v1/operations?limit=1`, { token: admin.token });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toBe("no such project");
    const unknown = await call(`/p/no-such-project/api/v1/operations?limit=1`, { token: admin.token });
    expect(unknown.status).toBe(404);
    // The same answer whether the project exists or not (its request id aside).
    expect(unknown.body.error).toMatchObject({ code: r.body.error.code, message: r.body.error.message });
  });
});
