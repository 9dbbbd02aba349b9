import { beforeAll, describe, expect, it } from "vitest";
import { call, chainCount, db, ingest, principal, unique } from "@/lib/testing/integration";
import { callAction, signInHttp } from "@/lib/testing/sessions";

/** Bulk triage from the review queue (lib/actions/review-bulk.ts): many corrections, each its own. */
type Who = { email: string; token: string; cookie: string };
let agent: { token: string };
let viewer: Who;
let alice: Who;
let bob: Who;

async function person(role: "viewer" | "reviewer"): Promise<Who> {
  const p = await principal(role, role === "viewer" ? ["read"] : ["review", "read"]);
  const { cookie } = await signInHttp(p.email, "integration-password");
  expect(cookie).toBeTruthy();
  return { ...p, cookie: cookie! };
}

beforeAll(async () => {
  agent = await principal("reviewer", ["ingest", "verify", "read"]);
  viewer = await person("viewer");
  alice = await person("reviewer");
  bob = await person("reviewer");
});

/** A divergent operation: the agent's receipt says accepted, the canonical read finds nothing. */
async function divergent() {
  const id = unique("op-bulk");
  const res = await ingest(agent.token, {
    operation_id: id,
    receipt: { status: "accepted", observed_at: "2026-11-30T10:00:00Z" },
    canonical_read: { status: "absent", observed_at: "2026-11-30T10:01:00Z" },
  });
  expect(res.status).toBe(201);
  return id;
}

const corrections = async (id: string) =>
  (await (await db()).chainRecord.findMany({ where: { kind: "correction", operationId: id }, orderBy: { seq: "asc" } })).map((r) => ({ actor: r.actor, ...JSON.parse(r.payload) }));
const outcome = async (id: string) => (await call(`/api/v1/operations/${id}`, { token: alice.token })).body.effective_outcome;
const bulk = (who: Who | null, fields: Record<string, string | string[]>) => callAction("bulkCorrectAction", fields, who?.cookie ?? null, "/review");

describe("bulk triage", () => {
  it("is refused to the anonymous (sent to sign in) and to viewers (a recorded refusal), and stores nothing", async () => {
    const id = await divergent();
    const before = await chainCount();
    const fields = { action: "resolve_not_applied", reason: "checked", id, follows: "" };
    expect((await bulk(null, fields)).location).toMatch(/\/login/);
    const refused = await bulk(viewer, fields);
    expect(refused.text).toContain("Only reviewers and admins work the review queue.");
    expect(await chainCount()).toBe(before + 1); // the refusal's security event, and nothing else
    expect(await corrections(id)).toEqual([]);
    const event = await (await db()).chainRecord.findFirstOrThrow({ orderBy: { seq: "desc" } });
    expect(event.actor).toBe(viewer.email);
    expect(event.payload).toContain("authorization.refused");
  });

  it("a reviewer resolves many as not applied with one reason: one correction each, each following its own latest", async () => {
    const [a, b] = [await divergent(), await divergent()];
    // b already has a correction (resolved, then reopened): the bulk one must follow the reopen.
    const first = await call(`/api/v1/operations/${b}/corrections`, { token: bob.token, body: { action: "resolve", outcome: "compensated", reason: "undone", expected_last_correction_id: null } });
    expect(first.status).toBe(201);
    const reopen = await call(`/api/v1/operations/${b}/corrections`, { token: bob.token, body: { action: "reopen", reason: "too quick", expected_last_correction_id: first.body.correction.id } });
    expect(reopen.status).toBe(201);

    const res = await bulk(alice, { action: "resolve_not_applied", reason: "Searched both accounts: nothing there.", id: [a, b], follows: ["", reopen.body.correction.id] });
    expect(res.status).toBe(200);
    expect(res.text).toContain(`"id":"${a}","ok":true`);
    expect(res.text).toContain(`"id":"${b}","ok":true`);
    for (const [id, follows] of [[a, null], [b, reopen.body.correction.id]] as const) {
      const last = (await corrections(id)).at(-1);
      expect(last).toMatchObject({ actor: alice.email, action: "resolve", outcome: "not_applied", reason: "Searched both accounts: nothing there.", follows });
      expect(await outcome(id)).toBe("not_applied");
    }
  });

  it("a 409 on one (corrected meanwhile, or claimed by someone else) reports that one and leaves the others done", async () => {
    const [fine, raced, held] = [await divergent(), await divergent(), await divergent()];
    // Loaded with no corrections; then bob corrects `raced` and claims `held` before alice submits.
    expect((await call(`/api/v1/operations/${raced}/corrections`, { token: bob.token, body: { action: "resolve", outcome: "compensated", reason: "undone by bob", expected_last_correction_id: null } })).status).toBe(201);
    expect((await call(`/api/v1/operations/${held}/claim`, { token: bob.token, body: {} })).status).toBe(200);

    const res = await bulk(alice, { action: "resolve_not_applied", reason: "Not there.", id: [raced, fine, held], follows: ["", "", ""] });
    expect(res.status).toBe(200);
    expect(res.text).toContain(`"id":"${raced}","ok":false,"code":"conflict"`);
    expect(res.text).toContain(`"id":"${fine}","ok":true`);
    expect(res.text).toContain(`"id":"${held}","ok":false,"code":"claimed_by_other"`);
    expect(await corrections(fine)).toMatchObject([{ actor: alice.email, action: "resolve", outcome: "not_applied", follows: null }]);
    expect(await corrections(raced)).toMatchObject([{ actor: bob.email, outcome: "compensated" }]);
    expect(await outcome(raced)).toBe("compensated");
    expect(await corrections(held)).toEqual([]);
    // A correction the rules refuse for one (retracting a success nobody claimed) is reported for it alone.
    const other = await divergent();
    const refused = await bulk(alice, { action: "retract", reason: "No.", id: other, follows: "" });
    expect(refused.text).toContain(`"id":"${other}","ok":false,"code":"invalid_request"`);
    expect(await corrections(other)).toEqual([]);
  });

  it("is bounded and checked before anything is stored: over the limit, no reason, or an unknown action", async () => {
    const id = await divergent();
    const before = await chainCount();
    const many = Array.from({ length: 101 }, () => id);
    expect((await bulk(alice, { action: "retract", reason: "x", id: many, follows: many.map(() => "") })).text).toContain("At most 100 operations at a time");
    expect((await bulk(alice, { action: "retract", reason: "   ", id, follows: "" })).text).toContain("The reason must not be empty.");
    expect((await bulk(alice, { action: "reopen", reason: "x", id, follows: "" })).text).toContain("Choose what to do");
    expect((await bulk(alice, { action: "retract", reason: "x", id, follows: [] })).text).toContain("must name the correction it follows");
    expect(await chainCount()).toBe(before);
  });
});
