/**
 * Webhooks end to end, over real HTTP: the production server delivers to a receiver this test
 * starts, which checks every signature with the `standardwebhooks` library itself. On SQLite, and
 * on PostgreSQL when INTEGRATION_DATABASE_URL names one.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import essay from "@/lib/domain/fixtures/essay-x-post.json";
import { startReceiver, type Receiver } from "./testing/receiver";
import { startWebhookApp, until, type WebhookApp } from "./testing/app";
import { runCliSync } from "@/lib/testing/cli";

let w: WebhookApp;
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
  w = await startWebhookApp("webhooks");
});
afterAll(async () => {
  await w?.app.stop();
  await rx?.close();
  await w?.db.drop();
});

/** Creates an endpoint at `path` of the receiver; the receiver learns its secret. */
async function endpoint(path: string, more: Record<string, unknown> = {}) {
  const res = await w.api("/api/v1/webhooks", { body: { url: rx.url(path), ...more } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.secret).toMatch(/^whsec_/);
  rx.secrets.set(path, res.body.secret);
  return res.body as { id: string; secret: string };
}
const at = (path: string) => rx.received.filter((r) => r.path === path);
const ofType = (path: string, type: string, op?: string) => at(path).filter((r) => r.body.type === type && (!op || r.body.data?.operation_id === op));
/** A statement on the test's database with the append-only triggers set aside. */
async function tamper(sql: string) {
  if (w.db.url.startsWith("file:")) {
    const db = new Database(w.db.url.slice("file:".length));
    db.exec("DROP TRIGGER IF EXISTS chain_records_no_update");
    db.exec(sql);
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: w.db.url });
  await client.connect();
  try {
    await client.query("ALTER TABLE chain_records DISABLE TRIGGER ALL");
    await client.query(sql);
    await client.query("ALTER TABLE chain_records ENABLE TRIGGER ALL");
  } finally {
    await client.end();
  }
}
const settle = () => new Promise((r) => setTimeout(r, 1500));
const deliveries = async (id: string) => (await w.api(`/api/v1/webhooks/${id}/deliveries`)).body.items as any[];

describe("webhooks", () => {
  it("the essay's case: exactly one operation.needs_review, signed, with the summary; then a resolve announces the correction and the new verdict", async () => {
    const all = await endpoint("/all");
    const filtered = await endpoint("/db-only", { filters: { tools: ["db.insert"] } });
    const res = await w.api("/api/v1/receipts", { token: w.tokens.ingest, body: essay.record });
    expect(res.status).toBe(201);
    const op = essay.record.operation_id;
    await until("needs_review", () => ofType("/all", "operation.needs_review", op).length);
    // The same record again stores nothing and announces nothing; a conflicting one neither.
    expect((await w.api("/api/v1/receipts", { token: w.tokens.ingest, body: essay.record })).body.duplicate).toBe(true);
    const conflict = await w.api("/api/v1/receipts", { token: w.tokens.ingest, body: { ...essay.record, receipt: { ...essay.record.receipt, status: "rejected" } } });
    expect(conflict.status).toBe(409);
    await settle();
    const [needs, ...more] = ofType("/all", "operation.needs_review", op);
    expect(more).toEqual([]);
    expect(needs.verified).toBe(true);
    expect(needs.id).toMatch(/^msg_/);
    expect(needs.body.data).toMatchObject({ operation_id: op, tool: "social.publish", agent: "dvnc", outcome: "divergent", reason: essay.expected.reason, failure_category: 4 });
    expect(String(needs.body.data!.link)).toMatch(new RegExp(`/operations/${op}$`));
    expect(at("/all").filter((r) => r.body.data?.operation_id === op).map((r) => r.body.type)).toEqual(["operation.needs_review"]);
    // The endpoint filtered to another tool heard nothing of it.
    expect(at("/db-only").filter((r) => r.body.data?.operation_id === op)).toEqual([]);

    const corrected = await w.api(`/api/v1/operations/${op}/corrections`, {
      token: w.tokens.review,
      body: { action: "resolve", outcome: "not_applied", reason: "the post never appeared: confirmed by hand" },
    });
    expect(corrected.status).toBe(201);
    const correction = await until("correction.created", () => ofType("/all", "correction.created", op)[0]);
    const changed = await until("verdict_changed", () => ofType("/all", "operation.verdict_changed", op)[0]);
    expect(correction.verified && changed.verified).toBe(true);
    expect(correction.body.data).toMatchObject({
      effective_outcome: "not_applied",
      correction: { id: corrected.body.correction.id, action: "resolve", outcome: "not_applied", outcome_seen: "divergent", reviewer: w.email },
    });
    expect(changed.body.data).toMatchObject({ before: "divergent", after: "not_applied", by: w.email, changed_by: { kind: "correction", action: "resolve" } });
    await settle();
    expect(ofType("/all", "operation.needs_review", op)).toHaveLength(1);

    // The delivery log shows each delivery with its attempt: status, latency, excerpt.
    const log = await deliveries(all.id);
    const first = log.find((d) => d.webhook_id === needs.id)!;
    expect(first).toMatchObject({ type: "operation.needs_review", status: "delivered", attempts: 1 });
    expect(first.attempt_log).toEqual([expect.objectContaining({ n: 1, status_code: 200, excerpt: "ok", error: null })]);
    expect(first.attempt_log[0].ms).toBeGreaterThanOrEqual(0);
    // Filtered to another tool: no operation event, only what is about no operation (checkpoints).
    expect((await deliveries(filtered.id)).filter((d) => d.type !== "checkpoint.created")).toEqual([]);
  });

  it("a held call announces approval.requested, and its expiry (the server's job) approval.decided, signed", async () => {
    await endpoint("/approvals", { filters: { event_types: ["approval.requested", "approval.decided"] } });
    const op = `op-held-${Date.now()}`;
    const held = { status: "pending", expires_at: new Date(Date.now() + 1500).toISOString(), rule: "billing.charge: /amount > 100", rule_version: "r1" };
    const res = await w.api("/api/v1/receipts", { token: w.tokens.ingest, body: { operation_id: op, tool: { name: "billing.charge" }, intent: { params: { amount: 250 } }, approval: held } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await until("approval.requested", () => ofType("/approvals", "approval.requested", op).length);
    const [requested] = ofType("/approvals", "approval.requested", op);
    expect(requested.verified).toBe(true);
    expect(requested.body.data).toMatchObject({ operation_id: op, tool: "billing.charge", rule: held.rule, rule_version: "r1", params_digest: expect.stringMatching(/^sha256:/) });
    // Nobody decides: the server's expiry job records the expiry and announces it.
    await until("approval.decided", () => ofType("/approvals", "approval.decided", op).length, 15_000);
    const [decided] = ofType("/approvals", "approval.decided", op);
    expect(decided.verified).toBe(true);
    expect(decided.body.data).toMatchObject({ operation_id: op, decision: "expired", effective_outcome: "rejected" });
    expect(at("/approvals").map((r) => r.body.type)).toEqual(["approval.requested", "approval.decided"]);
  });

  it("signs checkpoints off the machine: checkpoint.created carries size, head, key fingerprint and signature", async () => {
    const cp = await until("checkpoint.created", () => ofType("/all", "checkpoint.created")[0]);
    expect(cp.verified).toBe(true);
    expect(cp.body.data).toMatchObject({ size: expect.any(Number), head: expect.stringMatching(/^[0-9a-f]{64}$/), key: expect.stringMatching(/^ed25519:/) });
    expect(cp.body.data!.key_fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("a receiver that is down for a while gets the message later, with the same webhook-id", async () => {
    const down = await startReceiver();
    const port = down.port;
    await down.close();
    const res = await w.api("/api/v1/webhooks", { body: { url: `http://127.0.0.1:${port}/later` } });
    const secret = res.body.secret as string;
    const sent = await w.api(`/api/v1/webhooks/${res.body.id}/test`, { body: {} });
    expect(sent.status).toBe(202);
    // Refused twice (0 and 5 ms in test time), then the receiver comes back.
    await until("two failed attempts", async () => (await deliveries(res.body.id))[0]?.attempts >= 2);
    const up = await startReceiver(port);
    up.secrets.set("/later", secret);
    try {
      const got = await until("the late delivery", () => up.received[0], 30_000);
      expect(got.verified).toBe(true);
      expect(got.id).toBe(sent.body.message_id);
      expect(got.body.type).toBe("webhook.test");
      const d = await until("delivered in the log", async () => (await deliveries(res.body.id)).find((d) => d.status === "delivered"));
      expect(d.webhook_id).toBe(sent.body.message_id);
      expect(d.attempt_log.length).toBeGreaterThanOrEqual(3);
      expect(d.attempt_log.slice(0, -1).every((a: any) => a.status_code === null && a.error)).toBe(true);
      expect(d.attempt_log.at(-1)).toMatchObject({ status_code: 200 });
      // Redeliver: the same message again, the same webhook-id.
      const again = await w.api(`/api/v1/webhooks/${res.body.id}/deliveries/${d.id}/redeliver`, { body: {} });
      expect(again.status).toBe(202);
      const second = await until("the redelivery", () => up.received[1]);
      expect(second.id).toBe(sent.body.message_id);
      expect(second.verified).toBe(true);
    } finally {
      await up.close();
    }
  });

  it("honours Retry-After: the next attempt waits as long as the receiver asked", async () => {
    rx.answers.set("/busy", (n) => (n === 0 ? { status: 503, retryAfter: "2" } : { status: 200 }));
    const ep = await endpoint("/busy");
    await w.api(`/api/v1/webhooks/${ep.id}/test`, { body: {} });
    await until("the retry", () => at("/busy").length >= 2, 20_000);
    const [a, b] = at("/busy");
    expect(a.id).toBe(b.id);
    expect(b.at - a.at).toBeGreaterThanOrEqual(1900);
  });

  it("410 Gone disables the endpoint: nothing more is sent to it", async () => {
    rx.answers.set("/gone", { status: 410 });
    const ep = await endpoint("/gone", { filters: { event_types: ["operation.needs_review"] } });
    await w.api("/api/v1/receipts", { token: w.tokens.ingest, body: { ...essay.record, operation_id: "op-gone-1" } });
    const now = await until("disabled", async () => {
      const e = (await w.api(`/api/v1/webhooks/${ep.id}`)).body;
      return e.enabled === false ? e : null;
    });
    expect(now.disabled_reason).toMatch(/410/);
    expect((await deliveries(ep.id))[0]).toMatchObject({ status: "failed", last_status: 410 });
    await w.api("/api/v1/receipts", { token: w.tokens.ingest, body: { ...essay.record, operation_id: "op-gone-2" } });
    await until("the other endpoint heard of op-gone-2", () => ofType("/all", "operation.needs_review", "op-gone-2").length);
    await settle();
    expect(at("/gone")).toHaveLength(1);
    expect(await deliveries(ep.id)).toHaveLength(1);
  });

  it("a Slack endpoint gets a short text with the link", async () => {
    const ep = await endpoint("/slack", { format: "slack", filters: { event_types: ["operation.needs_review"] } });
    await w.api("/api/v1/receipts", { token: w.tokens.ingest, body: { ...essay.record, operation_id: "op-slack-1" } });
    const got = await until("the slack message", () => at("/slack")[0]);
    expect(got.verified).toBe(true);
    expect(Object.keys(got.body)).toEqual(["text"]);
    expect(got.body.text).toMatch(/op-slack-1.*needs review.*divergent/);
    expect(got.body.text).toContain("/operations/op-slack-1|Open in Reconcile>");
    await w.api(`/api/v1/webhooks/${ep.id}`, { method: "DELETE" });
  });

  it("a verification that finds a broken link announces chain.verification_failed with the first bad seq", async () => {
    await endpoint("/chain", { filters: { event_types: ["chain.verification_failed"] } });
    // Edit one chained record behind the database's back (its triggers set aside for the test).
    await tamper("UPDATE chain_records SET actor = actor || '-edited' WHERE seq = 2");
    try {
      const verify = runCliSync(["audit:verify"], { DATABASE_URL: w.db.url });
      expect(verify.status).toBe(1);
      expect(verify.stderr).toContain("chain broken at seq 2");
      const got = await until("chain.verification_failed", () => ofType("/chain", "chain.verification_failed")[0]);
      expect(got.verified).toBe(true);
      expect(got.body.data).toMatchObject({ first_bad_seq: 2, verified_by: expect.stringMatching(/^cli:/) });
      expect(String(got.body.data!.problem)).toMatch(/hash/);
    } finally {
      await tamper("UPDATE chain_records SET actor = substr(actor, 1, length(actor) - 7) WHERE seq = 2");
    }
  });

  it("after the last of the ten attempts the delivery is marked failed, and the log shows every attempt", async () => {
    // The whole schedule (about 75 hours) in about 3 seconds.
    await w.restart({ RECONCILE_WEBHOOK_SCHEDULE_SCALE: "0.00001" });
    const signed = await (await import("@/lib/testing/sessions")).signInHttp(w.email, "reliability-password", {}, w.app.base);
    w.cookie = signed.cookie!;
    rx.answers.set("/broken", { status: 500, body: "internal trouble" });
    const ep = await endpoint("/broken", { filters: { event_types: ["operation.needs_review"] } });
    await w.api(`/api/v1/webhooks/${ep.id}/test`, { body: {} });
    const d = await until("failed", async () => (await deliveries(ep.id)).find((d) => d.status === "failed"), 60_000);
    expect(d.attempts).toBe(10);
    expect(d.attempt_log.map((a: any) => [a.n, a.status_code, a.excerpt])).toEqual(Array.from({ length: 10 }, (_, i) => [i + 1, 500, "internal trouble"]));
    expect(new Set(at("/broken").map((r) => r.id)).size).toBe(1);
    expect(at("/broken")).toHaveLength(10);
    // The endpoint stays enabled: only 410 disables it.
    expect((await w.api(`/api/v1/webhooks/${ep.id}`)).body.enabled).toBe(true);
  });

  it("in a project other than the default, an endpoint's secret is sealed under that project's key, and its deliveries are signed with it (issue 47)", async () => {
    const projects = await import("@/lib/store/people/projects");
    const { prepareProject } = await import("@/lib/cli/projects");
    const p = await projects.createProject({ slug: `wh-b-${Date.now()}`, name: "Webhooks B", actor: "itest" });
    await prepareProject(p.id);
    const email = `wh-b-admin-${Date.now()}@itest.example`;
    await (await import("@/lib/store/people/users")).createUser({ email, password: "itest-password-1", role: "admin", project: p.id, actor: "itest", via: "cli" });
    const { token } = await (await import("@/lib/store/people/api-tokens")).createApiToken({ email, name: "b", scopes: ["read", "admin"], project: p.id, actor: "itest" });
    const made = await w.api("/api/v1/webhooks", { token, body: { url: rx.url("/project-b") } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    rx.secrets.set("/project-b", made.body.secret);
    const { inProject } = await import("@/lib/store/db/project-context");
    const { reader } = await import("@/lib/store/db/db");
    const { openSecret } = await import("@/lib/domain/webhooks/signing");
    const { AUTH_SECRET } = await import("@/lib/reliability/harness");
    const stored = await inProject(p, async () => (await reader()).webhookEndpoint.findUniqueOrThrow({ where: { id: made.body.id } }));
    expect(openSecret(stored.secretSealed, AUTH_SECRET, p.id)).toBe(made.body.secret);
    // Not under the one key every project shared before, nor another project's.
    expect(() => openSecret(stored.secretSealed, AUTH_SECRET)).toThrow();
    expect(() => openSecret(stored.secretSealed, AUTH_SECRET, "p-other")).toThrow();
    expect((await w.api(`/api/v1/webhooks/${made.body.id}/test`, { token, body: {} })).status).toBe(202);
    const got = await until("project B's test delivery", () => at("/project-b")[0], 30_000);
    expect(got.verified).toBe(true);
  });
});
