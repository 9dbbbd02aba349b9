/**
 * docs/API.md "Who may write what", against the real server and database: a verdict only a
 * verifier or a reviewer can decide. Every refusal stores nothing; every stage says who sent it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { baseUrl, call, chainCount, ingest, principal, unique } from "@/lib/testing/integration";
import { signInHttp } from "@/lib/testing/sessions";

type P = { email: string; token: string };
let agent: P; // reviewer: ingest + verify, the usual agent that reads back its own writes
let viewerIngest: P; // the reproduction: a viewer's ingest-only token
let otherAgent: P; // another user's ingest token
let verifier: P; // a reviewer's verify-only token
let admin: P;

beforeAll(async () => {
  agent = await principal("reviewer", ["ingest", "verify", "read"]);
  viewerIngest = await principal("viewer", ["ingest"]);
  otherAgent = await principal("reviewer", ["ingest", "read"]);
  verifier = await principal("reviewer", ["verify"]);
  admin = await principal("admin", ["ingest", "read"]);
});

const receipt = { status: "accepted", receipt_id: "gw-1", observed_at: "2026-08-28T14:02:11Z" };
const absent = { status: "absent", observed_at: "2026-08-28T14:31:02Z", evidence: "exact-text search does not show the post" };
const match = (observed_at = "2026-08-28T15:00:00Z") => ({ status: "match", observed_at, evidence: { object_id: "post-1" } });

/** An operation created by `by`: an accepted receipt whose read says the post is absent (divergent). */
async function divergent(by: P = agent): Promise<string> {
  const id = unique("op-trust");
  const r = await ingest(by.token, { operation_id: id, intent: { effect: "publish one post" }, receipt, canonical_read: absent, claimed_outcome: "success" });
  expect(r.status, r.text).toBe(201);
  expect(r.body.outcome).toBe("divergent");
  return id;
}

const read = async (id: string) => (await call(`/api/v1/operations/${encodeURIComponent(id)}`, { token: agent.token })).body;

describe("a canonical read needs the verify scope", () => {
  it("refuses the issue's reproduction: a viewer's ingest token sending a year-9999 read (403, nothing stored)", async () => {
    const id = await divergent();
    const before = await chainCount();
    const r = await ingest(viewerIngest.token, {
      operation_id: id,
      canonical_read: { status: "match", observed_at: "9999-01-01T00:00:00Z", evidence: { object_id: "fake" } },
    });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("verify_scope_required");
    expect(await chainCount()).toBe(before);
    expect((await read(id)).outcome).toBe("divergent");
  });

  it("refuses a read dated past the allowed clock skew even from a verifier (422 observed_in_future), and takes one inside it", async () => {
    const id = await divergent();
    const before = await chainCount();
    const r = await ingest(verifier.token, { operation_id: id, canonical_read: { ...match(), observed_at: "9999-01-01T00:00:00Z" } });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("observed_in_future");
    expect(r.body.error.details.fields).toEqual(["canonical_read.observed_at"]);
    expect(await chainCount()).toBe(before);
    const soon = new Date(Date.now() + 60_000).toISOString();
    expect((await ingest(verifier.token, { operation_id: id, canonical_read: match(soon) })).status).toBe(200);
  });

  it("refuses a receipt dated in the future too", async () => {
    const r = await ingest(agent.token, { operation_id: unique("op-trust"), receipt: { ...receipt, observed_at: "2999-01-01T00:00:00Z" } });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("observed_in_future");
  });

  it("in a batch, refuses only the items with reads (207) and stores the rest", async () => {
    const a = unique("op-trust");
    const b = unique("op-trust");
    const r = await ingest(otherAgent.token, { records: [{ operation_id: a, receipt }, { operation_id: b, receipt, canonical_read: absent }] });
    expect(r.status).toBe(207);
    expect(r.body.results.map((x: { status: number }) => x.status)).toEqual([201, 403]);
    expect(r.body.results[1].error.code).toBe("verify_scope_required");
    expect((await call(`/api/v1/operations/${b}`, { token: agent.token })).status).toBe(404);
  });
});

describe("an operation belongs to the user that created it", () => {
  it("refuses another user's ingest token (403 not_operation_owner, nothing stored)", async () => {
    const id = await divergent();
    const before = await chainCount();
    for (const body of [{ operation_id: id, side_effects: [{ name: "x", status: "observed" }] }, { operation_id: id, receipt }, { operation_id: id, intent: { effect: "other" } }]) {
      const r = await ingest(otherAgent.token, body);
      expect(r.status, JSON.stringify(body)).toBe(403);
      expect(r.body.error.code).toBe("not_operation_owner");
    }
    expect(await chainCount()).toBe(before);
  });

  it("lets a verifier add reads and side effects to it, but not the agent's own stages", async () => {
    const id = await divergent();
    const ok = await ingest(verifier.token, { operation_id: id, canonical_read: match(), side_effects: [{ name: "index entry", status: "observed" }] });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.outcome).toBe("verified");
    const intent = await ingest(verifier.token, { operation_id: id, intent: { effect: "other" } });
    expect(intent.status).toBe(403);
    expect(intent.body.error.code).toBe("forbidden");
    const envelope = await ingest(verifier.token, { operation_id: id, canonical_read: match("2026-08-28T15:05:00Z"), claimed_outcome: "failure" });
    expect(envelope.status).toBe(403);
  });

  it("lets an admin add anything", async () => {
    const id = await divergent();
    const r = await ingest(admin.token, { operation_id: id, side_effects: [{ name: "index entry", status: "observed" }] });
    expect(r.status, r.text).toBe(200);
  });

  it("decides the owner inside the transaction: two users creating one operation at once, one wins", async () => {
    const id = unique("op-trust");
    const [a, b] = await Promise.all([ingest(agent.token, { operation_id: id, receipt }), ingest(otherAgent.token, { operation_id: id, receipt })]);
    expect([a.status, b.status].sort()).toEqual([201, 403]);
  });

  it("the creator's other tokens and its session may add to it", async () => {
    const id = await divergent();
    const { createApiToken } = await import("@/lib/store/people/api-tokens");
    const second = (await createApiToken({ email: agent.email, name: "second service", scopes: ["ingest"], actor: "itest" })).token;
    expect((await ingest(second, { operation_id: id, side_effects: [{ name: "x", status: "observed" }] })).status).toBe(200);
    const { cookie } = await signInHttp(agent.email, "integration-password");
    const bySession = await call("/api/v1/receipts", {
      body: { operation_id: id, canonical_read: match() },
      headers: { cookie: cookie!, origin: baseUrl },
    });
    expect(bySession.status, bySession.text).toBe(200);
    const op = await read(id);
    expect(op.stages.at(-1).sent_by).toMatchObject({ via: "session", email: agent.email, token_id: null });
  });
});

describe("who sent each stage, and the verdict history", () => {
  it("names the user and token of every stage, and marks a verdict a later read changed", async () => {
    const id = await divergent();
    expect((await ingest(verifier.token, { operation_id: id, canonical_read: match() })).status).toBe(200);
    const op = await read(id);
    expect(op.stages.map((s: { stage: string; sent_by: { email: string; via: string; token_name: string } }) => [s.stage, s.sent_by.email, s.sent_by.via, s.sent_by.token_name])).toEqual([
      ["intent", agent.email, "token", "itest"],
      ["receipt", agent.email, "token", "itest"],
      ["canonical_read", agent.email, "token", "itest"],
      ["canonical_read", verifier.email, "token", "itest"],
    ]);
    const history = op.verdict_history as { what: string; effective_outcome: string; changed_by_later_read: boolean; sent_by: { email: string } }[];
    expect(history.map((h) => [h.what, h.effective_outcome, h.changed_by_later_read])).toEqual([
      ["intent", "uncertain", false],
      ["receipt", "uncertain", false],
      ["canonical_read", "divergent", false],
      ["canonical_read", "verified", true],
    ]);
    expect(history[3].sent_by.email).toBe(verifier.email);
  });
});

describe("at most 1,000 canonical reads per operation", () => {
  it("takes reads up to the cap and refuses the record that would pass it (422 too_many_reads)", async () => {
    const id = unique("op-trust");
    const reads = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ status: "absent", observed_at: new Date(Date.UTC(2026, 7, 28, 15) + (from + i) * 1000).toISOString() }));
    expect((await ingest(agent.token, { operation_id: id, receipt, canonical_read: reads(0, 999) })).status).toBe(201);
    const before = await chainCount();
    const over = await ingest(agent.token, { operation_id: id, canonical_read: reads(999, 2) });
    expect(over.status).toBe(422);
    expect(over.body.error.code).toBe("too_many_reads");
    expect(await chainCount()).toBe(before);
    // Re-sending reads already held adds nothing and is not refused; the thousandth is taken.
    expect((await ingest(agent.token, { operation_id: id, canonical_read: reads(0, 5) })).status).toBe(200);
    expect((await ingest(agent.token, { operation_id: id, canonical_read: reads(999, 1) })).status).toBe(200);
    expect((await ingest(agent.token, { operation_id: id, canonical_read: reads(1000, 1) })).body.error.code).toBe("too_many_reads");
  });
});
