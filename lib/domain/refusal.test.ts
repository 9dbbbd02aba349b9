import { describe, expect, it } from "vitest";
import { z } from "zod";
import { EFFECTIVE_OUTCOMES } from "./outcomes";
import { endpointCreateSchema } from "./webhooks/endpoint";
import { correctionRequestSchema } from "./corrections";
import { operationRecordSchema } from "./wire";
import { describeRefusal, SCHEMA_JARGON } from "./refusal";

/** The sentence for one bad value: the refusal's message. */
function said<T>(schema: z.ZodType<T>, input: unknown, names: { root?: string; key?: string } = {}): string {
  const r = schema.safeParse(input);
  if (r.success) throw new Error("the input was accepted");
  return describeRefusal(r.error, { input, schema, ...names }).message;
}

const query = z
  .object({
    outcome: z.enum(EFFECTIVE_OUTCOMES).optional(),
    limit: z.coerce.number().int().min(1).default(50).transform((n) => Math.min(n, 200)).meta({ accepts: "a whole number from 1 to 200" }),
    wait: z.coerce.number().int().min(0).max(60).optional(),
    share: z.number().min(0).max(1).optional(),
    needs_review: z.enum(["true", "false"]).optional(),
  })
  .strict();

describe("describeRefusal: a sentence naming the field and what is accepted", () => {
  it("an enum names every accepted value", () => {
    expect(said(query, { outcome: "nope" })).toBe(`outcome must be one of ${EFFECTIVE_OUTCOMES.join(", ")}`);
    expect(said(query, { needs_review: "yes" })).toBe("needs_review must be true or false");
  });

  it("a number says what range: the schema's own description first, else its bounds", () => {
    expect(said(query, { limit: "abc" })).toBe("limit must be a whole number from 1 to 200");
    expect(said(query, { limit: "0" })).toBe("limit must be a whole number from 1 to 200");
    expect(said(query, { limit: "1.5" })).toBe("limit must be a whole number from 1 to 200");
    expect(said(query, { wait: "x" })).toBe("wait must be a whole number from 0 to 60");
    expect(said(query, { wait: "61" })).toBe("wait must be a whole number from 0 to 60");
    expect(said(query, { share: 2 })).toBe("share must be a number from 0 to 1");
    expect(said(z.object({ n: z.number().min(3) }), { n: 1 })).toBe("n must be a number of at least 3");
  });

  it("a missing field is required", () => {
    expect(said(endpointCreateSchema, {})).toBe("url is required");
    expect(said(correctionRequestSchema, { reason: "x" })).toBe(`action is required`);
  });

  it("a list over its limit says how long it is and how many are accepted", () => {
    const tools = Array.from({ length: 100_001 }, (_, i) => `t${i}`);
    expect(said(endpointCreateSchema, { url: "https://x.invalid", filters: { tools } })).toBe("filters.tools has 100,001 items; at most 50 are accepted");
  });

  it("text over its limit, or empty", () => {
    expect(said(endpointCreateSchema, { url: "https://x.invalid", description: "x".repeat(600) })).toBe("description has 600 characters; at most 500 are accepted");
    expect(said(correctionRequestSchema, { action: "retract", reason: "  " })).toBe("reason must not be empty");
    expect(said(endpointCreateSchema, { url: "https://x.invalid", filters: { tools: [""] } })).toBe("filters.tools[0] must not be empty");
  });

  it("a wrong type says the type wanted, in words", () => {
    expect(said(endpointCreateSchema, { url: 5 })).toBe("url must be text");
    expect(said(endpointCreateSchema, { url: "https://x.invalid", enabled: "yes" })).toBe("enabled must be true or false");
    expect(said(endpointCreateSchema, { url: "https://x.invalid", filters: [] })).toBe("filters must be a JSON object");
    expect(said(endpointCreateSchema, { url: "https://x.invalid", filters: { tools: "a" } })).toBe("filters.tools must be a list");
    expect(said(endpointCreateSchema, [], { root: "request" })).toBe("the request must be a JSON object");
  });

  it("unknown fields are named, with the ones accepted", () => {
    expect(said(endpointCreateSchema, { url: "https://x.invalid", colour: 1 }, { root: "request" })).toBe(
      'the request has an unknown field "colour"; the accepted fields are url, description, format, enabled, filters',
    );
    expect(said(query, { foo: 1, bar: 2 }, { root: "query", key: "parameter" })).toBe(
      'the query has unknown parameters "foo", "bar"; the accepted parameters are outcome, limit, wait, share, needs_review',
    );
    const many = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, i]));
    const m = said(endpointCreateSchema, { url: "https://x.invalid", ...many }, { root: "request" });
    expect(m).toMatch(/^the request has unknown fields "k0", "k1", "k2", "k3", "k4" and 2,995 more; the accepted fields are/);
  });

  it("a union says each shape it accepts", () => {
    expect(said(operationRecordSchema, { operation_id: "a", intent: {}, tool: 5 })).toBe("tool must be text or a JSON object");
    // The shape it came closest to: every problem within it.
    expect(said(operationRecordSchema, { operation_id: "a", canonical_read: { status: "x", observed_at: 5 } })).toBe(
      "canonical_read.status must be one of match, absent, mismatch, unavailable; canonical_read.observed_at must be text",
    );
  });

  it("a union whose closest shape holds a problem for every element of a huge array still says a few, in bounded text", () => {
    const union = z.object({ reads: z.union([z.array(z.object({ status: z.enum(["match", "absent"]) })), z.object({ status: z.enum(["match", "absent"]) })]) });
    const input = { reads: Array.from({ length: 200_000 }, () => ({})) };
    const r = union.safeParse(input);
    expect(r.success).toBe(false);
    const { message } = describeRefusal(r.error!, { input });
    expect(message.length).toBeLessThan(2_000);
    expect(message).toMatch(/^reads\[0\]\.status /);
    expect(message).toMatch(/more problems/);
  });

  it("a schema's own words are kept, after the field", () => {
    expect(said(operationRecordSchema, { operation_id: "a b", intent: {} })).toBe("operation_id must be printable, without spaces or / ? # % \\");
    expect(said(operationRecordSchema, { operation_id: "a", receipt: { status: "accepted", observed_at: "yesterday" } })).toBe(
      "receipt.observed_at must be an RFC 3339 date-time, e.g. 2026-08-28T14:02:11Z",
    );
    expect(said(operationRecordSchema, { operation_id: "a" })).toBe("a record must carry at least one stage: intent, receipt, canonical_read or side_effects");
    expect(said(operationRecordSchema, { operation_id: "a", intent: { params: [] } })).toBe("intent.params must be a JSON object");
    const digest = z.object({ p: z.object({ params_digest: z.string().regex(/^sha256:/, 'params_digest is "sha256:" and 64 hex digits') }) });
    expect(said(digest, { p: { params_digest: "x" } })).toBe('p.params_digest is "sha256:" and 64 hex digits');
    const refined = z.object({ until: z.string().refine(() => false, "since must not be after until") });
    expect(said(refined, { until: "x" })).toBe("until: since must not be after until");
  });

  it("several problems are joined, the first five in the message and all of them (up to 20) in details", () => {
    const input = { url: 1, description: 2, format: "xml", enabled: "no", filters: { tools: [1, 2, 3, 4] } };
    const r = endpointCreateSchema.safeParse(input);
    if (r.success) throw new Error("accepted");
    const { message, details } = describeRefusal(r.error, { input, schema: endpointCreateSchema });
    expect(message.split("; ")).toHaveLength(6);
    expect(message).toMatch(/^url must be text; description must be text; format must be standard or slack; enabled must be true or false; filters.tools\[0\] must be text; and 3 more problems$/);
    expect(details).toHaveLength(8);
  });

  it("an unknown field is said first, however many other problems come before it: a misspelt name is most often the cause", () => {
    const input = { outcome: "x", limit: "x", wait: "x", share: "x", needs_review: "x", ouctome: "verified" };
    const r = query.safeParse(input);
    if (r.success) throw new Error("accepted");
    const { message, details } = describeRefusal(r.error, { input, schema: query, key: "parameter" });
    expect(message).toMatch(/^the record has an unknown parameter "ouctome"; the accepted parameters are outcome, limit, wait, share, needs_review; outcome must be /);
    expect(message).toMatch(/; and 1 more problem$/);
    // details stay in the schema's own order
    expect(details.map((d) => d.path)).toEqual(["outcome", "limit", "wait", "share", "needs_review", "(record)"]);
  });

  it("one sentence per field: an empty id is 'must not be empty', not also 'not in an accepted form'; details keep both", () => {
    const id = z.object({ a: z.string().min(1).regex(/^[a-z]+$/, "must be lowercase letters"), b: z.string().min(1).regex(/^[a-z]+$/, "must be lowercase letters") });
    const r = id.safeParse({ a: "", b: "" });
    if (r.success) throw new Error("accepted");
    const { message, details } = describeRefusal(r.error, { input: { a: "", b: "" }, schema: id });
    expect(message).toBe("a must not be empty; b must not be empty");
    expect(details).toHaveLength(4);
  });

  it("details keep the schema's own issue: path, code, its message and parameters", () => {
    const r = query.safeParse({ outcome: "nope" });
    if (r.success) throw new Error("accepted");
    const { details } = describeRefusal(r.error, { input: { outcome: "nope" }, schema: query });
    expect(details).toEqual([{ path: "outcome", code: "invalid_value", message: expect.stringMatching(/^Invalid option/), values: [...EFFECTIVE_OUTCOMES] }]);
  });

  it("a refusal stays short however long the keys sent", () => {
    const input = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${i}`.padEnd(5000, "k"), i]));
    const r = endpointCreateSchema.safeParse(input);
    if (r.success) throw new Error("accepted");
    const refusal = describeRefusal(r.error, { input, schema: endpointCreateSchema });
    expect(JSON.stringify(refusal).length).toBeLessThan(6000);
  });

  it("no sentence carries the schema's jargon", () => {
    const bad = [
      [query, { outcome: 1, limit: "NaN", wait: "-1", share: "x", needs_review: null, other: 1 }],
      [endpointCreateSchema, { url: null, description: [], format: 5, enabled: {}, filters: { event_types: ["x"], outcomes: [1], tools: [{}], agents: null } }],
      [correctionRequestSchema, { action: 5, outcome: "x", withdraw_claim: "x", reason: 7, evidence: { url: 1, x: 2 } }],
      [operationRecordSchema, { operation_id: 5, depends_on: "x", canonical_read: 5, side_effects: [{}], receipt: { status: "x" } }],
    ] as const;
    for (const [schema, input] of bad) {
      const r = (schema as z.ZodType).safeParse(input);
      if (r.success) throw new Error("accepted");
      const { message } = describeRefusal(r.error, { input, schema: schema as z.ZodType, max: 100 });
      for (const word of SCHEMA_JARGON) expect(message).not.toContain(word);
    }
  });
});
