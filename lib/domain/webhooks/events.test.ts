import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CorrectionFact } from "../corrections";
import { deriveOperation, type StoredStage } from "../operation";
import { EFFECTIVE_OUTCOMES, type EffectiveOutcome } from "../outcomes";
import essay from "../fixtures/essay-x-post.json";
import { MAX_BODY_BYTES, eventBody } from "./body";
import { endpointFiltersSchema, wants } from "./endpoint";
import { chainFailedEvent, checkpointEvent, correctionEvent, operationEvents, testEvent, type ChangeCause, type OutcomeChange } from "./events";
import { slackMessage } from "./slack";

const T = "2026-08-28T15:00:00.000Z";
const links = { base: "https://reconcile.example" };
const stage = (seq: number, s: StoredStage["stage"], data: unknown, envelope: Record<string, unknown> | null = null): StoredStage => ({
  seq,
  stage: s,
  observed_at: null,
  recorded_at: T,
  data,
  envelope,
});
const rec = essay.record;
const envelope = { tool: rec.tool, agent: rec.agent, trajectory_id: rec.trajectory_id, claimed_outcome: rec.claimed_outcome, idempotency: rec.idempotency };
/** The essay's X post, stage by stage: intent, receipt, unavailable read, absent read. */
const essayStages = [
  stage(1, "intent", rec.intent, envelope),
  stage(2, "receipt", rec.receipt),
  stage(3, "canonical_read", rec.canonical_read[0]),
  stage(4, "canonical_read", rec.canonical_read[1]),
];
const byRead: ChangeCause = { kind: "stage", stage: "canonical_read", seq: 4, by: "verifier@example.com" };
const state = (stages: StoredStage[], corrections: CorrectionFact[] = []) => deriveOperation(rec.operation_id, stages, corrections);
const change = (before: EffectiveOutcome | null, stages: StoredStage[], corrections: CorrectionFact[] = [], cause: ChangeCause = byRead): OutcomeChange => ({
  operationId: rec.operation_id,
  before,
  after: state(stages, corrections),
  cause,
  at: T,
});
const types = (c: OutcomeChange) => operationEvents(c, links).map((e) => e.type);

describe("operation events", () => {
  it("the essay's post, recorded at once, needs review exactly once, with its summary", () => {
    const [e, ...rest] = operationEvents(change(null, essayStages), links);
    expect(rest).toEqual([]);
    expect(e.type).toBe("operation.needs_review");
    expect(e.data).toEqual({
      operation_id: rec.operation_id,
      tool: "social.publish",
      agent: "dvnc",
      trajectory_id: rec.trajectory_id,
      outcome: "divergent",
      classified_as: "divergent",
      reason: essay.expected.reason,
      failure_category: 4,
      retry: essay.expected.retry,
      link: `https://reconcile.example/operations/${rec.operation_id}`,
    });
    expect(e.facets).toEqual({ tool: "social.publish", agent: "dvnc", outcome: "divergent" });
  });

  it("recorded stage by stage: needs review when it first becomes uncertain, then only verdict changes", () => {
    const announced = [];
    let before: EffectiveOutcome | null = null;
    for (let i = 1; i <= essayStages.length; i++) {
      const c = change(before, essayStages.slice(0, i));
      announced.push(...types(c));
      before = c.after.effective_outcome;
    }
    // intent → uncertain (no receipt), receipt/unavailable read → still uncertain, absent → divergent.
    expect(announced).toEqual(["operation.needs_review", "operation.verdict_changed"]);
  });

  it("a verified operation announces nothing; a later read that finds it absent needs review and changes the verdict", () => {
    const match = { status: "match", observed_at: "2026-08-28T14:10:00Z", evidence: { object_id: "p1" } };
    const verified = [stage(1, "intent", { target: "x" }, { tool: "t" }), stage(2, "receipt", rec.receipt), stage(3, "canonical_read", match)];
    expect(types(change(null, verified))).toEqual([]);
    const later = [...verified, stage(4, "canonical_read", rec.canonical_read[1])];
    const events = operationEvents(change("verified", later), links);
    expect(events.map((e) => e.type)).toEqual(["operation.verdict_changed", "operation.needs_review"]);
    expect(events[0].data).toMatchObject({
      before: "verified",
      after: "divergent",
      changed_by: { kind: "stage", stage: "canonical_read", seq: 4 },
      by: "verifier@example.com",
    });
  });

  it("a resolve changes the verdict (by the reviewer) and never asks for review; a reopen asks again", () => {
    const resolve: CorrectionFact = { id: "c1", action: "resolve", outcome: "not_applied" };
    const by: ChangeCause = { kind: "correction", action: "resolve", correction_id: "c1", seq: 5, by: "rev@example.com" };
    const resolved = operationEvents(change("divergent", essayStages, [resolve], by), links);
    expect(resolved.map((e) => e.type)).toEqual(["operation.verdict_changed"]);
    expect(resolved[0].data).toMatchObject({ before: "divergent", after: "not_applied", by: "rev@example.com", changed_by: { kind: "correction", action: "resolve" } });
    const reopen: CorrectionFact = { id: "c2", action: "reopen", outcome: null };
    expect(types(change("not_applied", essayStages, [resolve, reopen], { ...by, action: "reopen", correction_id: "c2" }))).toEqual([
      "operation.verdict_changed",
      "operation.needs_review",
    ]);
  });

  it("property: needs_review exactly when entering {uncertain, divergent}; verdict_changed exactly when an existing outcome changes", () => {
    const outcomes = fc.constantFrom(...EFFECTIVE_OUTCOMES);
    const stagesFor: Record<string, StoredStage[]> = {
      uncertain: essayStages.slice(0, 3),
      divergent: essayStages,
      verified: [stage(1, "receipt", rec.receipt), stage(2, "canonical_read", { status: "match", observed_at: "2026-08-28T14:10:00Z", evidence: "x" })],
      rejected: [stage(1, "receipt", { status: "rejected", observed_at: "2026-08-28T14:10:00Z" })],
    };
    fc.assert(
      fc.property(fc.option(outcomes, { nil: null }), fc.constantFrom("uncertain", "divergent", "verified", "rejected"), (before, after) => {
        const t = types(change(before, stagesFor[after]));
        const review = ["uncertain", "divergent"];
        expect(t.includes("operation.needs_review")).toBe(review.includes(after) && (before === null || !review.includes(before)));
        expect(t.includes("operation.verdict_changed")).toBe(before !== null && before !== after);
      }),
    );
  });
});

describe("other events", () => {
  it("correction.created carries the correction and the effective outcome", () => {
    const after = state(essayStages, [{ id: "c1", action: "resolve", outcome: "not_applied" }]);
    const correction = {
      id: "c1",
      action: "resolve" as const,
      outcome_seen: "divergent",
      outcome: "not_applied" as const,
      reason: "confirmed gone",
      evidence: null,
      reviewer: "rev@example.com",
      follows: null,
      seq: 5,
      recorded_at: T,
    };
    const e = correctionEvent(rec.operation_id, correction, after, links);
    expect(e).toMatchObject({ type: "correction.created", timestamp: T, data: { correction, effective_outcome: "not_applied", operation_id: rec.operation_id } });
  });

  it("checkpoint.created and chain.verification_failed", () => {
    const c = { size: 10, head: "ab".repeat(32), time: T, key: "ed25519:AAA", signature: "sig" };
    expect(checkpointEvent(c, "sha256:ff", links).data).toEqual({ ...c, key_fingerprint: "sha256:ff", link: "https://reconcile.example/audit" });
    expect(chainFailedEvent({ badSeq: 7, problem: "hash mismatch", checked: 6 }, T, "admin@example.com", links).data).toMatchObject({
      first_bad_seq: 7,
      problem: "hash mismatch",
      verified_by: "admin@example.com",
    });
    expect(chainFailedEvent({ badSeq: 7, problem: "hash mismatch", checked: 6 }, T, null, links).data).not.toHaveProperty("trail");
    // The instance's trail: said so, and the link is its page.
    expect(chainFailedEvent({ badSeq: 3, problem: "seq 3 is missing", checked: 2 }, T, "cli:ops", links, "instance").data).toEqual({
      first_bad_seq: 3,
      problem: "seq 3 is missing",
      records_checked: 2,
      verified_by: "cli:ops",
      link: "https://reconcile.example/settings/security",
      trail: "instance",
    });
  });
});

describe("bodies", () => {
  it("is {type, timestamp, data}", () => {
    const [e] = operationEvents(change(null, essayStages), links);
    expect(JSON.parse(eventBody(e))).toEqual({ type: e.type, timestamp: T, data: e.data });
  });

  it("stays under 20 kB whatever the values, cutting them and keeping the link", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 50_000 }), fc.array(fc.string({ maxLength: 2000 }), { maxLength: 300 }), fc.integer({ min: 0, max: 60 }), (s, arr, depth) => {
        let nested: unknown = arr;
        for (let i = 0; i < depth; i++) nested = { n: nested };
        const e = { type: "correction.created" as const, timestamp: T, link: "https://reconcile.example/operations/x", data: { reason: s, many: arr, nested } };
        const body = eventBody(e);
        expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_BODY_BYTES);
        const parsed = JSON.parse(body);
        expect(parsed.type).toBe("correction.created");
        if (body !== JSON.stringify({ type: e.type, timestamp: T, data: e.data })) expect(parsed.data).toMatchObject({ truncated: true, link: e.link });
      }),
      { numRuns: 40 },
    );
  });

  it("100,000 keys are cut to a few", () => {
    const big = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
    const body = eventBody({ type: "webhook.test", timestamp: T, link: "L", data: { big } });
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expect(JSON.parse(body).data.truncated).toBe(true);
  });
});

describe("filters", () => {
  const [needs] = operationEvents(change(null, essayStages), links);
  const f = (v: unknown) => endpointFiltersSchema.parse(v);
  it("empty filters take every event but the test event", () => {
    expect(wants(f({}), needs)).toBe(true);
    expect(wants(f({}), testEvent(T, "a", links))).toBe(false);
  });
  it("event types, tool, agent and outcome all have to match", () => {
    expect(wants(f({ event_types: ["operation.needs_review"] }), needs)).toBe(true);
    expect(wants(f({ event_types: ["correction.created"] }), needs)).toBe(false);
    expect(wants(f({ tools: ["social.publish"], agents: ["dvnc"], outcomes: ["divergent"] }), needs)).toBe(true);
    expect(wants(f({ tools: ["db.insert"] }), needs)).toBe(false);
    expect(wants(f({ agents: ["other"] }), needs)).toBe(false);
    expect(wants(f({ outcomes: ["uncertain"] }), needs)).toBe(false);
  });
  it("operation filters do not hide checkpoints; event types do", () => {
    const cp = checkpointEvent({ size: 1, head: "h", time: T, key: "k", signature: "s" }, "fp", links);
    expect(wants(f({ tools: ["db.insert"] }), cp)).toBe(true);
    expect(wants(f({ event_types: ["operation.needs_review"] }), cp)).toBe(false);
  });
  it("refuses unknown event types and outcomes", () => {
    expect(() => f({ event_types: ["operation.deleted"] })).toThrow();
    expect(() => f({ outcomes: ["fine"] })).toThrow();
    expect(() => f({ colour: [] })).toThrow();
  });
});

describe("slack", () => {
  it("is one short line of text with the link, markup escaped", () => {
    const [e] = operationEvents(change(null, essayStages), links);
    const m = slackMessage(e);
    expect(Object.keys(m)).toEqual(["text"]);
    expect(m.text).toContain("needs review");
    expect(m.text).toContain("*divergent*");
    expect(m.text).toContain(`<https://reconcile.example/operations/${rec.operation_id}|Open in Reconcile>`);
    expect(m.text.length).toBeLessThan(600);
    const evil = slackMessage({ ...e, data: { ...e.data, reason: "<!channel> & <http://evil|x>" } });
    expect(evil.text).not.toContain("<!channel>");
    expect(evil.text).toContain("&lt;!channel&gt; &amp;");
  });
});
