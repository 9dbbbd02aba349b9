import { beforeAll, describe, expect, it } from "vitest";
import essay from "@/lib/domain/fixtures/essay-x-post.json";
import { call, chainCount, db, ingest, principal, unique } from "@/lib/testing/integration";
import { signInHttp } from "@/lib/testing/sessions";

let ingestToken: string;
let reviewToken: string;
let reviewer: string;

beforeAll(async () => {
  ingestToken = (await principal("reviewer", ["ingest", "verify", "read"])).token;
  const r = await principal("reviewer", ["review", "read"]);
  reviewToken = r.token;
  reviewer = r.email;
});

async function essayOperation() {
  const id = unique("op-review");
  expect((await ingest(ingestToken, { ...essay.record, operation_id: id })).status).toBe(201);
  return id;
}

const correct = (id: string, body: unknown, token = reviewToken, headers: Record<string, string> = {}) =>
  call(`/api/v1/operations/${id}/corrections`, { token, body, headers });
const read = async (id: string) => (await call(`/api/v1/operations/${id}`, { token: ingestToken })).body;

describe("POST /api/v1/operations/{id}/corrections", () => {
  it("a reviewer resolves the essay's X post as not_applied; the originals stay byte-identical", async () => {
    const id = await essayOperation();
    const before = await read(id);
    const r = await correct(id, { action: "resolve", outcome: "not_applied", reason: "the post never appeared on the profile; a new post may be sent", expected_last_correction_id: null });
    expect(r.status).toBe(201);
    expect(r.body.correction).toMatchObject({ action: "resolve", outcome_seen: "divergent", outcome: "not_applied", reviewer, follows: null });
    expect(r.body.effective_outcome).toBe("not_applied");
    expect(r.body.retry).toEqual({ automatic: false, safe_replay_available: false, decision: "a new operation may be issued" });
    const after = await read(id);
    expect(JSON.stringify(after.stages)).toBe(JSON.stringify(before.stages));
    expect(after.outcome).toBe("divergent");
    expect(after.effective_outcome).toBe("not_applied");
    expect(after.needs_review).toBe(false);
    expect(after.corrections).toHaveLength(1);
    expect(after.corrections[0]).toMatchObject({ id: r.body.correction.id, reason: expect.stringContaining("never appeared"), hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const listed = await call(`/api/v1/operations?q=${id}`, { token: ingestToken });
    expect(listed.body.items[0]).toMatchObject({ outcome: "divergent", effective_outcome: "not_applied", needs_review: false });
  });

  it("reopen returns to the outcome before the resolve; a second reviewer on stale state gets 409 with what changed", async () => {
    const id = await essayOperation();
    const first = await correct(id, { action: "resolve", outcome: "compensated", reason: "deleted by hand" });
    const stale = await correct(id, { action: "resolve", outcome: "not_applied", reason: "I looked too", expected_last_correction_id: null });
    expect(stale.status).toBe(409);
    expect(stale.body.error.details).toMatchObject({ effective_outcome: "compensated", last_correction_id: first.body.correction.id, last_correction: { action: "resolve", reviewer } });
    const reopen = await correct(id, { action: "reopen", reason: "the deletion did not go through", expected_last_correction_id: first.body.correction.id });
    expect(reopen.status).toBe(201);
    expect(reopen.body.effective_outcome).toBe("divergent");
    expect(reopen.body.correction.follows).toBe(first.body.correction.id);
    expect(reopen.body.retry.decision).toBe("blocked until canonical state is reconciled");
  });

  it("a retraction withdraws an overclaimed success, and is itself a record", async () => {
    const id = unique("op-overclaim");
    await ingest(ingestToken, {
      operation_id: id,
      claimed_outcome: "success",
      receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" },
      canonical_read: { status: "match", observed_at: "2026-08-28T10:01:00Z", evidence: { object_id: "x-1" } },
    });
    expect((await read(id)).effective_outcome).toBe("verified");
    const r = await correct(id, { action: "retract", reason: "object x-1 is a different post: the evidence was wrong" });
    expect(r.status).toBe(201);
    const after = await read(id);
    expect(after).toMatchObject({ outcome: "verified", effective_outcome: "divergent", claim_withdrawn: true, needs_review: true });
  });

  it.each([
    ["verified without evidence", { action: "resolve", outcome: "verified", reason: "looks fine" }, /needs evidence/],
    ["reopen of an unresolved operation", { action: "reopen", reason: "x" }, /only a resolved operation/],
    ["retract of an unclaimed divergent", null, /only a verified operation/],
  ])("the rules refuse %s with 422 and store nothing", async (_name, body, message) => {
    const id = body ? await essayOperation() : unique("op-noclaim");
    if (!body) await ingest(ingestToken, { operation_id: id, receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" }, canonical_read: { status: "absent", observed_at: "2026-08-28T10:01:00Z" } });
    const before = await chainCount();
    const r = await correct(id, body ?? { action: "retract", reason: "x" });
    expect(r.status).toBe(422);
    expect(r.body.error.message).toMatch(message);
    expect(await chainCount()).toBe(before);
  });

  it.each([
    ["an empty reason", { action: "resolve", outcome: "not_applied", reason: "  " }, 422],
    ["an unknown field", { action: "resolve", outcome: "not_applied", reason: "x", note: "y" }, 422],
    ["an unknown action", { action: "delete", reason: "x" }, 422],
    ["malformed JSON", "{", 400],
  ])("bad input (%s) is a 4xx and stores nothing", async (_name, body, status) => {
    const id = await essayOperation();
    const before = await chainCount();
    const r = typeof body === "string" ? await call(`/api/v1/operations/${id}/corrections`, { token: reviewToken, raw: body }) : await correct(id, body);
    expect(r.status).toBe(status);
    expect(await chainCount()).toBe(before);
  });

  it("viewers and ingest or read-only tokens are refused (403) and store nothing; unknown operations are 404", async () => {
    const id = await essayOperation();
    const viewer = await principal("viewer", ["ingest", "read", "export"]);
    const { cookie } = await signInHttp(viewer.email, "integration-password");
    const origin = (await import("@/lib/testing/integration")).baseUrl;
    const before = await chainCount();
    const securityBefore = await (await db()).chainRecord.count({ where: { kind: "security" } });
    const body = { action: "resolve", outcome: "not_applied", reason: "x" };
    expect((await correct(id, body, viewer.token)).status).toBe(403);
    expect((await correct(id, body, ingestToken)).status).toBe(403);
    expect((await call(`/api/v1/operations/${id}/corrections`, { body, headers: { cookie: cookie!, origin } })).status).toBe(403);
    expect((await call(`/api/v1/operations/${id}/corrections`, { body })).status).toBe(401);
    // Refusals are themselves security events; no correction was stored.
    expect(await (await db()).chainRecord.count({ where: { kind: "correction", operationId: id } })).toBe(0);
    expect(await (await db()).chainRecord.count({ where: { kind: { not: "security" } } })).toBe(before - securityBefore);
    expect((await read(id)).corrections).toEqual([]);
    expect((await correct("op-no-such-operation", body)).status).toBe(404);
  });

  it("a race of 20 concurrent corrections on one operation stores exactly one", async () => {
    const id = await essayOperation();
    const reviewers = await Promise.all(Array.from({ length: 4 }, () => principal("reviewer", ["review"])));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        correct(id, { action: "resolve", outcome: i % 2 ? "not_applied" : "compensated", reason: `reviewer ${i}`, expected_last_correction_id: null }, reviewers[i % 4].token),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(19);
    expect((await read(id)).corrections).toHaveLength(1);
    expect(await (await db()).chainRecord.count({ where: { kind: "correction", operationId: id } })).toBe(1);
  });
});
