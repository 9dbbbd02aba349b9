import { beforeAll, describe, expect, it } from "vitest";
import { paramsDigest } from "@/lib/domain/approval";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";

/** Approvals (docs/GATEWAY.md "Approvals in the product") through the real server and database. */
let agent: { email: string; token: string };
let alice: { email: string; token: string };
let bob: { email: string; token: string };
let selfReviewing: { email: string; token: string };

beforeAll(async () => {
  agent = await principal("viewer", ["ingest", "read"]);
  alice = await principal("reviewer", ["review", "read"]);
  bob = await principal("reviewer", ["review", "read"]);
  selfReviewing = await principal("reviewer", ["ingest", "review", "read"]);
});

const params = { amount: 250, currency: "EUR", customer: "c-17" };
// A day by default: a held call that expired during a later test would append a record there (its count of the chain).
const held = (id: string, inMs = 24 * 3600_000, extra: Record<string, unknown> = {}) => ({
  operation_id: id,
  tool: { name: "billing.charge" },
  agent: { name: "itest-agent" },
  intent: { effect: "charge the customer once", params },
  approval: { status: "pending", expires_at: new Date(Date.now() + inMs).toISOString(), rule: "/amount > 100", rule_version: "r1" },
  ...extra,
});
const path = (id: string, rest = "") => `/api/v1/operations/${encodeURIComponent(id)}/approval${rest}`;
const decide = (id: string, decision: string, token = alice.token, reason = "checked the order") => call(path(id), { token, body: { decision, reason } });
const use = (id: string, digest = paramsDigest(params), token = agent.token) => call(path(id, "/use"), { token, body: { params_digest: digest } });
const operation = async (id: string) => (await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token: agent.token })).body;

describe("a call held for approval", () => {
  it("waits as uncertain outside the review queue, in the Approvals list, until a reviewer approves it once", async () => {
    const id = unique("op-held");
    const created = await ingest(agent.token, held(id));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ outcome: "uncertain", reason: "waiting for approval" });
    const op = await operation(id);
    expect(op.approval).toMatchObject({ status: "pending", rule: "/amount > 100", rule_version: "r1", params_digest: paramsDigest(params) });
    expect(op.needs_review).toBe(false);
    const list = await call("/api/v1/approvals?limit=200", { token: alice.token });
    expect(list.body.rows.map((r: { operation_id: string }) => r.operation_id)).toContain(id);

    expect((await call(path(id), { token: agent.token })).body.status).toBe("pending");
    // A held call is decided, not corrected.
    const corrected = await call(`/api/v1/operations/${id}/corrections`, { token: alice.token, body: { action: "resolve", outcome: "not_applied", reason: "never sent" } });
    expect(corrected.status).toBe(409);
    expect(corrected.body.error.message).toMatch(/held for approval/);
    // Nothing to forward before a decision.
    expect((await use(id)).status).toBe(409);

    const approved = await decide(id, "approve");
    expect(approved.status).toBe(201);
    expect(approved.body).toMatchObject({ status: "approved", decided_by: alice.email, reason: "checked the order" });
    // Exactly one decision: a second, either way, is a conflict that changes nothing.
    const again = await decide(id, "deny", bob.token);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toMatch(/already approved by/);

    // Bound to the exact call and used once.
    expect((await use(id, paramsDigest({ ...params, amount: 9999 }))).status).toBe(409);
    const taken = await use(id);
    expect(taken.status).toBe(201);
    expect(taken.body.used_by).toBe(agent.email);
    const second = await use(id);
    expect(second.status).toBe(409);
    expect(second.body.error.message).toMatch(/already forwarded/);

    // The records are chained, in order, and the projection follows them.
    const records = await (await db()).chainRecord.findMany({ where: { operationId: id, kind: "approval" }, orderBy: { seq: "asc" } });
    expect(records.map((r) => JSON.parse(r.payload).action)).toEqual(["decided", "used"]);
    expect(JSON.parse(records[0].payload)).toMatchObject({ decision: "approve", params_digest: paramsDigest(params), rule_version: "r1" });
    expect((await (await db()).operationApproval.findUniqueOrThrow({ where: { operationId: id } })).status).toBe("approved");

    // The receipt after forwarding: the stages decide from here, as for any call.
    const receipt = await ingest(agent.token, { operation_id: id, receipt: { status: "accepted", observed_at: new Date().toISOString() } });
    expect(receipt.body.reason).toBe("the write was accepted, but canonical read-back is unavailable");
  });

  it("denied: rejected with the reviewer's reason, never forwarded", async () => {
    const id = unique("op-denied");
    await ingest(agent.token, held(id));
    const denied = await decide(id, "deny", bob.token, "the customer asked for a refund instead");
    expect(denied.body.status).toBe("denied");
    const op = await operation(id);
    expect(op).toMatchObject({ effective_outcome: "rejected", reason: `denied by ${bob.email}: the customer asked for a refund instead` });
    expect((await use(id)).status).toBe(409);
  });

  it("expires when nobody decides in time: a long poll answers with the expiry, and a late decision is refused", async () => {
    const id = unique("op-expiring");
    await ingest(agent.token, held(id, 1200));
    const started = Date.now();
    const waited = await call(path(id, "?wait=10"), { token: agent.token });
    expect(waited.body.status).toBe("expired");
    expect(Date.now() - started).toBeLessThan(8000);
    expect((await decide(id, "approve")).status).toBe(409);
    const op = await operation(id);
    expect(op.effective_outcome).toBe("rejected");
    expect(op.reason).toMatch(/no reviewer approved before the approval expired/);
    // One expiry record, however many noticed it.
    expect(await (await db()).chainRecord.count({ where: { operationId: id, kind: "approval" } })).toBe(1);
  });

  it("may not be approved by the account that made the call, nor while another reviewer holds it", async () => {
    const own = unique("op-own");
    await ingest(selfReviewing.token, held(own));
    const self = await decide(own, "approve", selfReviewing.token);
    expect(self.status).toBe(403);
    expect(self.body.error.message).toMatch(/another reviewer must approve/);

    const claimed = unique("op-claimed");
    await ingest(agent.token, held(claimed));
    expect((await call(`/api/v1/operations/${claimed}/claim`, { token: bob.token, body: {} })).status).toBe(200);
    expect((await decide(claimed, "approve", alice.token)).status).toBe(409);
    expect((await decide(claimed, "approve", bob.token)).status).toBe(201);
  });

  it("refuses malformed requests and decisions with a clear 4xx, storing nothing", async () => {
    const bad = await ingest(agent.token, { ...held(unique("op-bad")), approval: { status: "approved", expires_at: "soon", rule: "", rule_version: "r1" } });
    expect(bad.status).toBe(422);
    const noIntent = await ingest(agent.token, { operation_id: unique("op-noint"), receipt: { status: "accepted", observed_at: new Date().toISOString() }, approval: held("x").approval });
    expect(noIntent.status).toBe(422);
    const id = unique("op-shapes");
    await ingest(agent.token, held(id));
    const before = await (await db()).chainRecord.count({ where: { operationId: id } });
    for (const body of [{}, { decision: "maybe", reason: "x" }, { decision: "approve" }, { decision: "approve", reason: "   " }, { decision: "approve", reason: "x", extra: 1 }, { decision: "approve", reason: "x".repeat(5000) }]) {
      const r = await call(path(id), { token: alice.token, body });
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    expect((await call(path(id, "?wait=31"), { token: agent.token })).status).toBe(400);
    expect((await call(path(id, "?wait=abc"), { token: agent.token })).status).toBe(400);
    expect((await call(path(id, "/use"), { token: agent.token, body: { params_digest: "md5:x" } })).status).toBe(422);
    expect(await (await db()).chainRecord.count({ where: { operationId: id } })).toBe(before);
    expect((await call(path(unique("nothing")), { token: agent.token })).status).toBe(404);
  });

  it("the Approvals tab names the owner's email in a project other than the default (issue 47: users are the instance's)", async () => {
    const projects = await import("@/lib/store/people/projects");
    const { prepareProject } = await import("@/lib/cli/projects");
    const p = await projects.createProject({ slug: unique("appr").toLowerCase(), name: "Approvals B", actor: "itest" });
    await prepareProject(p.id);
    const email = `${unique("b-agent")}@itest.example`;
    await (await import("@/lib/store/people/users")).createUser({ email, password: "integration-password", role: "admin", project: p.id, actor: "itest", via: "cli" });
    const { token } = await (await import("@/lib/store/people/api-tokens")).createApiToken({ email, name: "b", scopes: ["ingest", "read"], project: p.id, actor: "itest" });
    const id = unique("op-held-b");
    expect((await ingest(token, held(id))).status).toBe(201);
    const { inProject } = await import("@/lib/store/db/project-context");
    const { approvalQueue } = await import("@/lib/store/review/approvals");
    const { calls } = await inProject(p, () => approvalQueue(200));
    expect(calls.find((c) => c.operation_id === id)?.owner).toBe(email);
  });
});
