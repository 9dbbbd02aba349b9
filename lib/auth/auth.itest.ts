import { createHash, createHmac } from "node:crypto";
import { INTEGRATION_AUTH_SECRET } from "@/lib/testing/integration-setup";
import { beforeAll, describe, expect, it } from "vitest";
import { baseUrl, call, db, ingest, principal, unique } from "@/lib/testing/integration";
import { callAction, signInHttp, signOutHttp } from "@/lib/testing/sessions";

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
  const { updateUser } = await import("@/lib/store/people/users");
  await updateUser({ id: await userId(email), disabled: true, actor: "itest" });
}

/** A project of its own, with an admin who is in it alone: a token of it, and their session. */
async function otherProject(): Promise<{ token: string; cookie: string }> {
  const projects = await import("@/lib/store/people/projects");
  const { prepareProject } = await import("@/lib/cli/projects");
  const p = await projects.createProject({ slug: unique("authz").toLowerCase(), name: "Authz B", actor: "itest" });
  await prepareProject(p.id);
  const email = `${unique("b-admin")}@itest.example`;
  await (await import("@/lib/store/people/users")).createUser({ email, password: PASSWORD, role: "admin", project: p.id, actor: "itest", via: "cli" });
  const { token } = await (await import("@/lib/store/people/api-tokens")).createApiToken({ email, name: "b", scopes: ["ingest", "verify", "read", "export", "review", "admin"], project: p.id, actor: "itest" });
  const { cookie } = await signInHttp(email, PASSWORD);
  return { token, cookie: cookie! };
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
    const admin_ = (await principal("admin", ["admin"])).token;
    const adminToken = () => ({ authorization: `Bearer ${admin_}` });
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
    who["token:admin"] = { name: "admin token (admin scope)", headers: adminToken };
    const scraper = (await principal("admin", ["metrics"])).token;
    // Project B, its admin (in no other project) with a token of B, and a session of a member of B alone.
    const b = await otherProject();
    who.otherProject = { name: "another project's admin token", headers: () => ({ authorization: `Bearer ${b.token}` }) };
    who.outsider = { name: "session of a member of another project only", headers: session(b.cookie) };
    who["token:metrics"] = { name: "metrics token (an admin's)", headers: () => ({ authorization: `Bearer ${scraper}` }) };
    ingestToken = tokens.ingest;
    opId = (await ingest(tokens.ingest, record())).body.operation_id;
  });

  // ingest: a receipt; read: a canonical read alone (TRUST.md: needs verify); otlp: an OTLP
  // export with no spans (the ingest or verify permission, as for receipts); claim: GET, then
  // POST and DELETE of the claim on an operation of its own (review); notes: GET of an
  // operation's notes (read), note: POST of a note on it (review).
  // secrets, secretSet, secretDelete: verifier secrets (admins: as verifiers).
  // verifiers: the list; define: POST of an empty (invalid) definition; dryrun: a dry run of an
  // unknown verifier (admins only: session, or a token with the admin scope). hooks, hookAdd,
  // hookTest, hookRotate: webhook endpoints (the same): list them, create one from an invalid body (an
  // admin's 422 shows the check came after authorization), a test event to and a secret rotation
  // of an endpoint that does not exist. verdicts: the verdict export's delivery log (admins).
  // approvals: the list of held calls (read); approval: one's state (read); decide: approve a call
  // (review); use: take an approved call to forward it (ingest), each of an operation not held.
  // trail: GET /api/v1/security-events, the instance's own security trail (instance admins only).
  // caller: GET /api/v1/token (who is asking; any principal of the project); wait: GET of an
  // operation with ?wait= (the long poll; as reading it). attempts, attempt: an operation's attempt
  // records, read; one added to an operation of the ingest token's user (its owner, or an admin).
  type Row = { secrets: number; secretSet: number; secretDelete: number; ingest: number; read: number; otlp: number; list: number; metrics: number; one: number; health: number; claim: number; take: number; release: number; notes: number; note: number; verifiers: number; define: number; dryrun: number; hooks: number; hookAdd: number; hookTest: number; hookRotate: number; verdicts: number; approvals: number; approval: number; decide: number; use: number; prom: number; live: number; ready: number; projects: number; projectAdd: number; members: number; memberAdd: number; project: number; projectSet: number; trail: number; caller: number; wait: number; attempts: number; attempt: number };
  const expected: Record<string, Row> = {
    anonymous: { secrets: 401, secretSet: 401, secretDelete: 401, ingest: 401, read: 401, otlp: 401, list: 401, metrics: 401, one: 401, health: 200, claim: 401, take: 401, release: 401, notes: 401, note: 401, verifiers: 401, define: 401, dryrun: 401, hooks: 401, hookAdd: 401, hookTest: 401, hookRotate: 401, verdicts: 401, approvals: 401, approval: 401, decide: 401, use: 401, prom: 307, live: 200, ready: 200, projects: 401, projectAdd: 401, members: 401, memberAdd: 401, project: 401, projectSet: 401, trail: 401, caller: 401, wait: 401, attempts: 401, attempt: 401 },
    viewer: { secrets: 403, secretSet: 403, secretDelete: 403, ingest: 201, read: 403, otlp: 200, list: 200, metrics: 200, one: 200, health: 200, claim: 200, take: 403, release: 403, notes: 200, note: 403, verifiers: 403, define: 403, dryrun: 403, hooks: 403, hookAdd: 403, hookTest: 403, hookRotate: 403, verdicts: 403, approvals: 200, approval: 404, decide: 403, use: 404, prom: 308, live: 200, ready: 200, projects: 403, projectAdd: 403, members: 403, memberAdd: 403, project: 200, projectSet: 403, trail: 403, caller: 200, wait: 200, attempts: 200, attempt: 403 },
    reviewer: { secrets: 403, secretSet: 403, secretDelete: 403, ingest: 201, read: 201, otlp: 200, list: 200, metrics: 200, one: 200, health: 200, claim: 200, take: 200, release: 200, notes: 200, note: 201, verifiers: 403, define: 403, dryrun: 403, hooks: 403, hookAdd: 403, hookTest: 403, hookRotate: 403, verdicts: 403, approvals: 200, approval: 404, decide: 404, use: 404, prom: 308, live: 200, ready: 200, projects: 403, projectAdd: 403, members: 403, memberAdd: 403, project: 200, projectSet: 403, trail: 403, caller: 200, wait: 200, attempts: 200, attempt: 403 },
    admin: { secrets: 200, secretSet: 422, secretDelete: 404, ingest: 201, read: 201, otlp: 200, list: 200, metrics: 200, one: 200, health: 200, claim: 200, take: 200, release: 200, notes: 200, note: 201, verifiers: 200, define: 422, dryrun: 404, hooks: 200, hookAdd: 422, hookTest: 404, hookRotate: 404, verdicts: 200, approvals: 200, approval: 404, decide: 404, use: 404, prom: 308, live: 200, ready: 200, projects: 200, projectAdd: 422, members: 200, memberAdd: 422, project: 200, projectSet: 422, trail: 200, caller: 200, wait: 200, attempts: 200, attempt: 201 },
    "token:ingest": { secrets: 403, secretSet: 403, secretDelete: 403, ingest: 201, read: 403, otlp: 200, list: 403, metrics: 403, one: 403, health: 200, claim: 403, take: 403, release: 403, notes: 403, note: 403, verifiers: 403, define: 403, dryrun: 403, hooks: 403, hookAdd: 403, hookTest: 403, hookRotate: 403, verdicts: 403, approvals: 403, approval: 403, decide: 403, use: 404, prom: 403, live: 200, ready: 200, projects: 403, projectAdd: 403, members: 403, memberAdd: 403, project: 403, projectSet: 403, trail: 403, caller: 200, wait: 403, attempts: 403, attempt: 201 },
    "token:verify": { secrets: 403, secretSet: 403, secretDelete: 403, ingest: 403, read: 201, otlp: 200, list: 403, metrics: 403, one: 403, health: 200, claim: 403, take: 403, release: 403, notes: 403, note: 403, verifiers: 403, define: 403, dryrun: 403, hooks: 403, hookAdd: 403, hookTest: 403, hookRotate: 403, verdicts: 403, approvals: 403, approval: 403, decide: 403, use: 403, prom: 403, live: 200, ready: 200, projects: 403, projectAdd: 403, members: 403, memberAdd: 403, project: 403, projectSet: 403, trail: 403, caller: 200, wait: 403, attempts: 403, attempt: 403 },
    "token:read": { secrets: 403, secretSet: 403, secretDelete: 403, ingest: 403, read: 403, otlp: 403, list: 200, metrics: 200, one: 200, health: 200, claim: 200, take: 403, release: 403, notes: 200, note: 403, verifiers: 403, define: 403, dryrun: 403, hooks: 403, hookAdd: 403, hookTest: 403, hookRotate: 403, verdicts: 403, approvals: 200, approval: 404, decide: 403, use: 403, prom: 403, live: 200, ready: 200, projects: 403, projectAdd: 403, members: 403, memberAdd: 403, project: 200, projectSet: 403, trail: 403, caller: 200, wait: 200, attempts: 200, attempt: 403 },
    "token:export": { secrets: 403, secretSet: 403, secretDelete: 403, ingest: 403, read: 403, otlp: 403, list: 403, metrics: 403, one: 403, health: 200, claim: 403, take: 403, release: 403, notes: 403, note: 403, verifiers: 403, define: 403, dryrun: 403, hooks: 403, hookAdd: 403, hookTest: 403, hookRotate: 403, verdicts: 403, approvals: 403, approval: 403, decide: 403, use: 403, prom: 403, live: 200, ready: 200, projects: 403, projectAdd: 403, members: 403, memberAdd: 403, project: 403, projectSet: 403, trail: 403, caller: 200, wait: 403, attempts: 403, attempt: 403 },
    "token:review": { secrets: 403, secretSet: 403, secretDelete: 403, ingest: 403, read: 403, otlp: 403, list: 403, metrics: 403, one: 403, health: 200, claim: 403, take: 200, release: 200, notes: 403, note: 201, verifiers: 403, define: 403, dryrun: 403, hooks: 403, hookAdd: 403, hookTest: 403, hookRotate: 403, verdicts: 403, approvals: 403, approval: 403, decide: 404, use: 403, prom: 403, live: 200, ready: 200, projects: 403, projectAdd: 403, members: 403, memberAdd: 403, project: 403, projectSet: 403, trail: 403, caller: 200, wait: 403, attempts: 403, attempt: 403 },
    disabledSession: { secrets: 401, secretSet: 401, secretDelete: 401, ingest: 401, read: 401, otlp: 401, list: 401, metrics: 401, one: 401, health: 200, claim: 401, take: 401, release: 401, notes: 401, note: 401, verifiers: 401, define: 401, dryrun: 401, hooks: 401, hookAdd: 401, hookTest: 401, hookRotate: 401, verdicts: 401, approvals: 401, approval: 401, decide: 401, use: 401, prom: 308, live: 200, ready: 200, projects: 401, projectAdd: 401, members: 401, memberAdd: 401, project: 401, projectSet: 401, trail: 401, caller: 401, wait: 401, attempts: 401, attempt: 401 },
    disabledToken: { secrets: 401, secretSet: 401, secretDelete: 401, ingest: 401, read: 401, otlp: 401, list: 401, metrics: 401, one: 401, health: 200, claim: 401, take: 401, release: 401, notes: 401, note: 401, verifiers: 401, define: 401, dryrun: 401, hooks: 401, hookAdd: 401, hookTest: 401, hookRotate: 401, verdicts: 401, approvals: 401, approval: 401, decide: 401, use: 401, prom: 401, live: 200, ready: 200, projects: 401, projectAdd: 401, members: 401, memberAdd: 401, project: 401, projectSet: 401, trail: 401, caller: 401, wait: 401, attempts: 401, attempt: 401 },
    badToken: { secrets: 401, secretSet: 401, secretDelete: 401, ingest: 401, read: 401, otlp: 401, list: 401, metrics: 401, one: 401, health: 200, claim: 401, take: 401, release: 401, notes: 401, note: 401, verifiers: 401, define: 401, dryrun: 401, hooks: 401, hookAdd: 401, hookTest: 401, hookRotate: 401, verdicts: 401, approvals: 401, approval: 401, decide: 401, use: 401, prom: 401, live: 200, ready: 200, projects: 401, projectAdd: 401, members: 401, memberAdd: 401, project: 401, projectSet: 401, trail: 401, caller: 401, wait: 401, attempts: 401, attempt: 401 },
    "token:admin": { secrets: 200, secretSet: 422, secretDelete: 404, ingest: 403, read: 403, otlp: 403, list: 403, metrics: 403, one: 403, health: 200, claim: 403, take: 403, release: 403, notes: 403, note: 403, verifiers: 200, define: 422, dryrun: 404, hooks: 200, hookAdd: 422, hookTest: 404, hookRotate: 404, verdicts: 200, approvals: 403, approval: 403, decide: 403, use: 403, prom: 403, live: 200, ready: 200, projects: 200, projectAdd: 422, members: 200, memberAdd: 422, project: 403, projectSet: 422, trail: 200, caller: 200, wait: 403, attempts: 403, attempt: 403 },
    // Project B's admin, with every scope but metrics: the default project's operations are not
    // there for this token (404, never 403), and everything it lists or changes is B's own.
    otherProject: { secrets: 200, secretSet: 422, secretDelete: 404, ingest: 201, read: 201, otlp: 200, list: 200, metrics: 200, one: 404, health: 200, claim: 404, take: 404, release: 404, notes: 404, note: 404, verifiers: 200, define: 422, dryrun: 404, hooks: 200, hookAdd: 422, hookTest: 404, hookRotate: 404, verdicts: 200, approvals: 200, approval: 404, decide: 404, use: 404, prom: 403, live: 200, ready: 200, projects: 403, projectAdd: 403, members: 404, memberAdd: 404, project: 404, projectSet: 404, trail: 403, caller: 200, wait: 404, attempts: 404, attempt: 404 },
    // A session of a user who is only in project B: the default project does not exist for them.
    outsider: { secrets: 404, secretSet: 404, secretDelete: 404, ingest: 404, read: 404, otlp: 404, list: 404, metrics: 404, one: 404, health: 200, claim: 404, take: 404, release: 404, notes: 404, note: 404, verifiers: 404, define: 404, dryrun: 404, hooks: 404, hookAdd: 404, hookTest: 404, hookRotate: 404, verdicts: 404, approvals: 404, approval: 404, decide: 404, use: 404, prom: 308, live: 200, ready: 200, projects: 404, projectAdd: 404, members: 404, memberAdd: 404, project: 404, projectSet: 404, trail: 404, caller: 404, wait: 404, attempts: 404, attempt: 404 },
    "token:metrics": { secrets: 403, secretSet: 403, secretDelete: 403, ingest: 403, read: 403, otlp: 403, list: 403, metrics: 403, one: 403, health: 200, claim: 403, take: 403, release: 403, notes: 403, note: 403, verifiers: 403, define: 403, dryrun: 403, hooks: 403, hookAdd: 403, hookTest: 403, hookRotate: 403, verdicts: 403, approvals: 403, approval: 403, decide: 403, use: 403, prom: 200, live: 200, ready: 200, projects: 403, projectAdd: 403, members: 403, memberAdd: 403, project: 403, projectSet: 403, trail: 403, caller: 200, wait: 403, attempts: 403, attempt: 403 },
  };
  const readRecord = () => ({ operation_id: unique("op-authz"), canonical_read: { status: "absent", observed_at: "2026-08-28T10:05:00Z" } });

  for (const subrequest of [false, true]) {
    it.each(Object.keys(expected))(`%s${subrequest ? " with x-middleware-subrequest" : ""}`, async (key) => {
      const extra: Record<string, string> = subrequest ? { "x-middleware-subrequest": "middleware:middleware:middleware:middleware:middleware" } : {};
      const h = (): Record<string, string> => ({ ...who[key].headers(), ...extra });
      const mine = (await ingest(ingestToken, record())).body.operation_id;
      const got = {
        // Verifier secrets (admins, as verifiers): the list; a value refused (422 once authorized); a delete of none (404).
        secrets: (await call("/api/v1/verifier-secrets", { headers: h() })).status,
        secretSet: (await call("/api/v1/verifier-secrets/AUTHZ_SECRET", { method: "PUT", body: {}, headers: h() })).status,
        secretDelete: (await call("/api/v1/verifier-secrets/NO_SUCH_SECRET", { method: "DELETE", headers: h() })).status,
        ingest: (await call("/api/v1/receipts", { body: record(), headers: h() })).status,
        read: (await call("/api/v1/receipts", { body: readRecord(), headers: h() })).status,
        otlp: (await call("/api/v1/otlp/v1/traces", { body: { resourceSpans: [] }, headers: h() })).status,
        list: (await call("/api/v1/operations?limit=1", { headers: h() })).status,
        metrics: (await call("/api/v1/metrics?tool=x", { headers: h() })).status,
        one: (await call(`/api/v1/operations/${opId}`, { headers: h() })).status,
        health: (await call("/api/health", { headers: h() })).status,
        claim: (await call(`/api/v1/operations/${opId}/claim`, { headers: h() })).status,
        take: (await call(`/api/v1/operations/${mine}/claim`, { body: {}, headers: h() })).status,
        release: (await call(`/api/v1/operations/${mine}/claim`, { method: "DELETE", headers: h() })).status,
        notes: (await call(`/api/v1/operations/${opId}/comments`, { headers: h() })).status,
        note: (await call(`/api/v1/operations/${mine}/comments`, { body: { text: "checked with the bank" }, headers: h() })).status,
        verifiers: (await call("/api/v1/verifiers", { headers: h() })).status,
        define: (await call("/api/v1/verifiers", { body: {}, headers: h() })).status,
        dryrun: (await call("/api/v1/verifiers/no-such-verifier/dry-run", { body: { operation_id: opId }, headers: h() })).status,
        hooks: (await call("/api/v1/webhooks", { headers: h() })).status,
        hookAdd: (await call("/api/v1/webhooks", { body: { url: "ftp://nowhere.example/" }, headers: h() })).status,
        hookTest: (await call("/api/v1/webhooks/ep_none/test", { body: {}, headers: h() })).status,
        hookRotate: (await call("/api/v1/webhooks/ep_none/rotate-secret", { body: {}, headers: h() })).status,
        // The verdict export's delivery log (issue 41): admins, as webhooks.
        verdicts: (await call("/api/v1/verdict-exports?limit=1", { headers: h() })).status,
        // Approvals (docs/GATEWAY.md) of an operation that was not held: 404 once authorized.
        approvals: (await call("/api/v1/approvals", { headers: h() })).status,
        approval: (await call(`/api/v1/operations/${opId}/approval`, { headers: h() })).status,
        decide: (await call(`/api/v1/operations/${mine}/approval`, { body: { decision: "approve", reason: "fine" }, headers: h() })).status,
        use: (await call(`/api/v1/operations/${mine}/approval/use`, { body: { params_digest: "sha256:" + "0".repeat(64) }, headers: h() })).status,
        // GET /metrics: with a bearer token, the Prometheus scrape (the metrics scope, an admin's);
        // without one, the Metrics page (a session's; anyone else is sent to sign in, unfollowed here).
        prom: (await fetch(`${baseUrl}/metrics`, { headers: h(), redirect: "manual" })).status,
        live: (await call("/api/health/live", { headers: h() })).status,
        ready: (await call("/api/health/ready", { headers: h() })).status,
        // Projects (instance admins) and the default project's members (its admins); bodies refused once authorized.
        projects: (await call("/api/v1/projects", { headers: h() })).status,
        projectAdd: (await call("/api/v1/projects", { body: {}, headers: h() })).status,
        members: (await call("/api/v1/projects/default/members", { headers: h() })).status,
        memberAdd: (await call("/api/v1/projects/default/members", { body: {}, headers: h() })).status,
        // The project itself: its members read it, its admins change it (an empty change refused once authorized).
        project: (await call("/api/v1/projects/default", { headers: h() })).status,
        projectSet: (await call("/api/v1/projects/default", { method: "PATCH", body: {}, headers: h() })).status,
        // The instance's security trail: instance admins, a session or a token with the admin scope.
        trail: (await call("/api/v1/security-events", { headers: h() })).status,
        // Who is asking (the gateway's start check): any session or token of the project.
        caller: (await call("/api/v1/token", { headers: h() })).status,
        // An operation, long-polled for its verdict (the gateway's await_verdict): as reading it.
        wait: (await call(`/api/v1/operations/${opId}?wait=0.05`, { headers: h() })).status,
        // What the agent was told (the gateway's attempt records): read as notes; added by the operation's owner (or an admin).
        attempts: (await call(`/api/v1/operations/${opId}/attempts`, { headers: h() })).status,
        attempt: (await call(`/api/v1/operations/${mine}/attempts`, { body: { answer: "refused", text: "not sent again" }, headers: h() })).status,
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

  it("a refused authorization is a security event in the chain; the same principal's next refusals of it in the window are counted, not chained", async () => {
    const ingestOnly = await principal("viewer", ["ingest"]);
    const before = await (await db()).chainRecord.count({ where: { kind: "security" } });
    expect((await call("/api/v1/operations", { token: ingestOnly.token })).status).toBe(403);
    const events = await (await db()).chainRecord.findMany({ where: { kind: "security" }, orderBy: { seq: "desc" }, take: 1 });
    expect(await (await db()).chainRecord.count({ where: { kind: "security" } })).toBe(before + 1);
    expect(JSON.parse(events[0].payload)).toMatchObject({ type: "authorization.refused", permission: "operations:read", path: "/api/v1/operations", until: expect.any(String) });
    expect((await call("/api/v1/operations", { token: ingestOnly.token })).status).toBe(403);
    expect(await (await db()).chainRecord.count({ where: { actor: ingestOnly.email } })).toBeLessThanOrEqual(2);
    const counted = await (await db()).refusalWindow.findMany({ where: { actor: ingestOnly.email, permission: "operations:read" } });
    expect(counted.reduce((sum, w) => sum + w.count, 0)).toBe(2);
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
      expect((await (await db()).projectMember.findFirstOrThrow({ where: { projectId: "default", user: { email: viewer.email } } })).role).toBe("viewer");
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
    const { updateUser } = await import("@/lib/store/people/users");
    const client = await db();
    // The instance's admins: the default project's.
    const enabledAdmins = (extra: object = {}) => client.projectMember.findMany({ where: { projectId: "default", role: "admin", user: { disabled: false, ...extra } } });
    const admins = await enabledAdmins();
    // Leave exactly one enabled admin, then try to remove it.
    for (const a of admins.slice(1)) await updateUser({ id: a.userId, role: "viewer", actor: "itest" });
    const last = await person("admin");
    const rest = await enabledAdmins({ NOT: { email: last.email } });
    for (const a of rest) await updateUser({ id: a.userId, role: "viewer", actor: "itest" });
    const lastId = await userId(last.email);
    const demote = await callAction("updateUserAction", { id: lastId, role: "viewer" }, last.cookie);
    expect(demote.text).toContain("This is the last admin");
    const off = await callAction("updateUserAction", { id: lastId, disabled: "true" }, last.cookie);
    expect(off.text).toContain("This is the last admin");
    expect(await client.user.findUniqueOrThrow({ where: { id: lastId } })).toMatchObject({ disabled: false });
    expect(await client.projectMember.findUniqueOrThrow({ where: { projectId_userId: { projectId: "default", userId: lastId } } })).toMatchObject({ role: "admin" });
  });

  it("the first-admin action refuses once any user exists", async () => {
    const before = await (await db()).user.count();
    const res = await callAction("setupAction", { email: `${unique("late")}@itest.example`, password: "a-long-password", confirm: "a-long-password" }, null, "/setup");
    expect(res.text).toContain("already has an admin");
    expect(await (await db()).user.count()).toBe(before);
  });
});

describe("sign-in", () => {
  const securityRecords = async (actor: string) =>
    (await (await db()).instanceEvent.findMany({ where: { actor }, orderBy: { seq: "asc" } })).map((e) => JSON.parse(e.payload));

  it("the 101st failure within the hour is refused; then even the right password is; another account is unaffected", async () => {
    const victim = await principal("viewer", ["read"]);
    const other = await principal("viewer", ["read"]);
    for (let i = 0; i < 100; i++) {
      const r = await signInHttp(victim.email, `wrong-${i}`);
      expect(r.location, `attempt ${i + 1}`).toMatch(/code=invalid/);
    }
    const before = await securityRecords(victim.email);
    expect(before.map((e) => e.type)).toEqual(Array(100).fill("signin.failed"));

    // No unauthenticated growth of the chain: past the limit, many more attempts — at once (the
    // first ones race for the window's one record) and then one after another — add one
    // signin.throttled record for the account, not one each.
    const burst = await Promise.all(Array.from({ length: 15 }, (_, i) => signInHttp(victim.email, i % 3 ? `burst-${i}` : PASSWORD)));
    expect(burst.every((r) => /code=throttled-(60|59)/.test(r.location) && !r.cookie)).toBe(true);
    const refused = await signInHttp(victim.email, "wrong-again");
    expect(refused.location).toMatch(/code=throttled-(\d+)/);
    const right = await signInHttp(victim.email, PASSWORD);
    expect(right.cookie).toBeNull();
    expect(right.location).toMatch(/code=throttled-(60|59)/);
    for (let i = 0; i < 10; i++) expect((await signInHttp(victim.email, `again-${i}`)).location).toMatch(/code=throttled/);
    const unaffected = await signInHttp(other.email, PASSWORD);
    expect(unaffected.cookie).toBeTruthy();

    const added = (await securityRecords(victim.email)).slice(before.length);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({ type: "signin.throttled", scope: "account", key: victim.email, source: "127.0.0.1" });
    expect(Date.parse(added[0].until) - Date.now()).toBeGreaterThan(55 * 60_000);
  });

  /** The server's keyed digest (lib/crypto/identifier.ts), computed here from its secret as an operator would. */
  const keyed = (text: string) =>
    "hmac:" + createHmac("sha256", createHmac("sha256", INTEGRATION_AUTH_SECRET).update("reconcile identifier digest v1").digest()).update(text.toLowerCase()).digest("hex").slice(0, 16);

  it("an identifier that names no user is stored as a short keyed digest, never as typed nor as a plain SHA-256", async () => {
    // Someone typed their password into the email field.
    const typed = `Correct Horse ${unique("battery")} Staple`;
    const digest = keyed(typed);
    // A fast unsalted hash of what was typed (what was kept before issue 47) is dictionary-attackable: it must be nowhere.
    const unsalted = createHash("sha256").update(typed.toLowerCase()).digest("hex").slice(0, 16);
    const r = await signInHttp(typed, "whatever-else");
    expect(r.location).toMatch(/code=invalid/);
    const [event] = await securityRecords(digest);
    expect(event).toMatchObject({ type: "signin.failed", email: digest, reason: "unknown account", source: "127.0.0.1" });
    const secret = typed.toLowerCase().split(" ")[2];
    const client = await db();
    expect(await client.chainRecord.count({ where: { OR: [{ payload: { contains: secret } }, { actor: { contains: secret } }] } })).toBe(0);
    expect(await client.rateLimiterFlexible.count({ where: { key: { contains: secret } } })).toBe(0);
    expect(await client.rateLimiterFlexible.count({ where: { key: `signin-account:${digest}` } })).toBe(1);
    expect(await client.instanceEvent.count({ where: { OR: [{ payload: { contains: unsalted } }, { actor: { contains: unsalted } }] } })).toBe(0);
    expect(await client.rateLimiterFlexible.count({ where: { key: { contains: unsalted } } })).toBe(0);
  });

  it("an identifier longer than 254 characters is refused and kept only as a digest", async () => {
    const long = `${unique("long")}${"x".repeat(300)}@itest.example`;
    const digest = keyed(long);
    const r = await signInHttp(long, PASSWORD);
    expect(r.cookie).toBeNull();
    expect(r.location).toMatch(/code=invalid/);
    const [event] = await securityRecords(digest);
    expect(event).toMatchObject({ type: "signin.failed", email: digest, reason: "identifier too long" });
    const client = await db();
    expect(await client.chainRecord.count({ where: { payload: { contains: long.slice(0, 40) } } })).toBe(0);
    expect(await client.rateLimiterFlexible.count({ where: { key: { contains: long.slice(0, 40) } } })).toBe(0);
    // Even a user whose email is that long (none can be made) would not be looked up by it.
    expect(await client.user.count({ where: { email: long } })).toBe(0);
  });

  it("a known account's failure names its email", async () => {
    const p = await principal("viewer", ["read"]);
    await signInHttp(p.email, "nope");
    expect(await securityRecords(p.email)).toEqual([expect.objectContaining({ type: "signin.failed", email: p.email, reason: "wrong password" })]);
  });

  it("the recorded and throttled address is the socket's: a spoofed X-Forwarded-For changes nothing", async () => {
    const p = await principal("viewer", ["read"]);
    // Addresses no other test uses (198.18.0.0/15), so that the throttle table tells what this one did.
    const octet = () => 1 + Math.floor(Math.random() * 250);
    const [forwarded, real, ours] = Array.from({ length: 3 }, () => `198.18.${octet()}.${octet()}`);
    const spoof = { "x-forwarded-for": forwarded, "x-real-ip": real, "x-reconcile-client-address": ours };
    await signInHttp(p.email, "nope", spoof);
    await signInHttp(p.email, PASSWORD, spoof);
    const events = await securityRecords(p.email);
    expect(events.map((e) => e.type)).toEqual(["signin.failed", "signin.succeeded"]);
    expect(events.map((e) => e.source)).toEqual(["127.0.0.1", "127.0.0.1"]);
    const keys = (await (await db()).rateLimiterFlexible.findMany({ where: { key: { startsWith: "signin-address:" } } })).map((k) => k.key);
    expect(keys).toContain("signin-address:127.0.0.1");
    expect(keys.filter((k) => [forwarded, real, ours].some((a) => k === `signin-address:${a}`))).toEqual([]);
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

describe("no open redirect: from= is followed only to this origin", () => {
  const bad = ["/%5Cevil.example", "//evil.example", "https://evil.example", "/%5C%5Cevil.example", "%2F%2Fevil.example", "/.//evil.example", "%09//evil.example", "/%09/evil.example"];
  let cookie: string;
  beforeAll(async () => {
    cookie = (await person("viewer")).cookie;
  });
  const target = (location: string | null) => {
    const url = new URL(location ?? "", baseUrl);
    return { origin: url.origin, path: url.pathname + url.search };
  };

  it.each(bad)("signed in, GET /login?from=%s goes to /", async (from) => {
    const res = await fetch(`${baseUrl}/login?from=${from}`, { redirect: "manual", headers: { cookie } });
    expect(res.status).toBe(307);
    expect(res.headers.get("location")).not.toMatch(/evil/);
    expect(target(res.headers.get("location"))).toEqual({ origin: new URL(baseUrl).origin, path: "/" });
  });

  it("a good from=/operations?x=1 still works", async () => {
    const res = await fetch(`${baseUrl}/login?from=/operations?x=1`, { redirect: "manual", headers: { cookie } });
    expect(res.status).toBe(307);
    expect(target(res.headers.get("location"))).toEqual({ origin: new URL(baseUrl).origin, path: "/operations?x=1" });
  });

  it("the sign-in form's from (the server action) and Auth.js's callbackUrl are held to the same rule", async () => {
    const p = await principal("viewer", ["read"]);
    for (const from of ["/\\evil.example", "//evil.example", "https://evil.example", "/\\\\evil.example"]) {
      const res = await callAction("loginAction", { email: p.email, password: PASSWORD, from }, null, "/login");
      expect(res.location, from).not.toMatch(/evil/);
      // The overview: in the default project, where the old paths lead.
      expect(target(res.location).path, from).toBe("/p/default");
    }
    const good = await callAction("loginAction", { email: p.email, password: PASSWORD, from: "/operations?x=1" }, null, "/login");
    expect(target(good.location)).toEqual({ origin: new URL(baseUrl).origin, path: "/p/default/operations?x=1" });
    // The credentials endpoint itself, with a foreign callbackUrl.
    const csrfRes = await fetch(`${baseUrl}/api/auth/csrf`);
    const { csrfToken } = (await csrfRes.json()) as { csrfToken: string };
    const res = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfRes.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ") },
      body: new URLSearchParams({ csrfToken, email: p.email, password: PASSWORD, callbackUrl: "/\\evil.example" }),
    });
    expect(res.headers.get("location")).not.toMatch(/evil/);
  });

  it("signed out, a page's way back is kept only as a path on this origin", async () => {
    const res = await fetch(`${baseUrl}/operations?outcome=divergent`, { redirect: "manual" });
    expect(res.headers.get("location")).toMatch(/\/login\?from=%2Foperations%3Foutcome%3Ddivergent$/);
    const inProject = await fetch(`${baseUrl}/p/default/operations?outcome=divergent`, { redirect: "manual" });
    expect(inProject.headers.get("location")).toMatch(/\/login\?from=%2Fp%2Fdefault%2Foperations%3Foutcome%3Ddivergent$/);
  });
});

describe("sign-out ends the session on every instance", () => {
  const ops = (cookie: string) => call("/api/v1/operations?limit=1", { headers: { cookie } }).then((r) => r.status);
  const events = async (type: string, email: string) =>
    (await (await db()).instanceEvent.findMany({ orderBy: { seq: "asc" } })).map((e) => ({ actor: e.actor, ...JSON.parse(e.payload) })).filter((e) => e.type === type && e.email === email);

  it("a cookie captured before sign-out is refused after it, as is the same user's other session", async () => {
    const p = await person("viewer");
    const other = (await signInHttp(p.email, PASSWORD)).cookie!;
    expect([await ops(p.cookie), await ops(other)]).toEqual([200, 200]);
    expect(await signOutHttp(p.cookie)).toBe(302);
    // The captured cookie still decodes (it is a signed JWT): the session version refuses it.
    expect([await ops(p.cookie), await ops(other)]).toEqual([401, 401]);
    const page = await fetch(`${baseUrl}/p/default/operations`, { redirect: "manual", headers: { cookie: p.cookie } });
    expect(page.status).toBe(307);
    expect(page.headers.get("location")).toMatch(/\/login/);
    const session = await (await fetch(`${baseUrl}/api/auth/session`, { headers: { cookie: p.cookie } })).json();
    expect(session?.user?.active ?? null).toBeFalsy();
    // One signout record; the dead cookie replayed at the endpoint changes and records nothing.
    await signOutHttp(p.cookie);
    expect(await events("signout", p.email)).toHaveLength(1);
    const again = await signInHttp(p.email, PASSWORD);
    expect(await ops(again.cookie!)).toBe(200);
  });

  it("the Sign out button (the server action) does the same", async () => {
    const p = await person("reviewer");
    expect(await ops(p.cookie)).toBe(200);
    await callAction("logoutAction", {}, p.cookie, "/");
    expect(await ops(p.cookie)).toBe(401);
  });

  it("an admin signs a user out everywhere: a recorded act, that nobody else may do; tokens go on working", async () => {
    const user = await person("reviewer");
    const admin = await person("admin");
    const viewer = await person("viewer");
    const id = await userId(user.email);
    const refused = await callAction("signOutEverywhereAction", { id }, viewer.cookie, "/settings/users");
    expect(refused.text).toContain("You may not do this.");
    expect(await ops(user.cookie)).toBe(200);
    const done = await callAction("signOutEverywhereAction", { id }, admin.cookie, "/settings/users");
    expect(done.text).toContain(`Every session of ${user.email} has ended.`);
    expect(await ops(user.cookie)).toBe(401);
    expect(await ops(admin.cookie)).toBe(200);
    expect((await call("/api/v1/operations?limit=1", { token: user.token })).status).toBe(200);
    expect(await events("sessions.ended", user.email)).toEqual([expect.objectContaining({ actor: admin.email, source: "127.0.0.1" })]);
  });
});

describe("the last admin, under concurrency", () => {
  it("two admins demoting each other at once leave one admin, and the other gets a clear refusal", async () => {
    const { updateUser } = await import("@/lib/store/people/users");
    const client = await db();
    const a = await person("admin");
    const b = await person("admin");
    const [ida, idb] = [await userId(a.email), await userId(b.email)];
    const onlyTheseTwo = async () => {
      // The default project's admins are the instance's.
      const others = await client.projectMember.findMany({ where: { projectId: "default", role: "admin", user: { disabled: false }, userId: { notIn: [ida, idb] } } });
      for (const o of others) await updateUser({ id: o.userId, role: "viewer", actor: "itest" });
      for (const id of [ida, idb]) await updateUser({ id, role: "admin", actor: "itest" });
    };
    const admins = () => client.projectMember.count({ where: { projectId: "default", role: "admin", user: { disabled: false } } });

    // Two transactions at once, in the store.
    await onlyTheseTwo();
    const results = await Promise.allSettled([
      updateUser({ id: idb, role: "viewer", actor: a.email }),
      updateUser({ id: ida, role: "viewer", actor: b.email }),
    ]);
    expect(await admins()).toBe(1);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const refusal = results.find((r): r is PromiseRejectedResult => r.status === "rejected")!.reason;
    expect(refusal.message).toMatch(/this is the last admin/);

    // The same through the real server: each admin's session demotes the other at once.
    for (let round = 0; round < 3; round++) {
      await onlyTheseTwo();
      const answers = await Promise.all([
        callAction("updateUserAction", { id: idb, role: "viewer" }, a.cookie, "/settings/users"),
        callAction("updateUserAction", { id: ida, role: "viewer" }, b.cookie, "/settings/users"),
      ]);
      expect(await admins(), `round ${round}`).toBe(1);
      const texts = answers.map((r) => r.text);
      expect(texts.filter((t) => /is now an enabled viewer/.test(t)), `round ${round}`).toHaveLength(1);
      expect(texts.filter((t) => /This is the last admin|You may not do this/.test(t)), `round ${round}`).toHaveLength(1);
    }
  });
});
