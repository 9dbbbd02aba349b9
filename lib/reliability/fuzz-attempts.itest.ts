/**
 * Fuzz family for attempt records (GET/POST /api/v1/operations/{id}/attempts, the MCP gateway's
 * "what the agent was told"): random and hostile bodies (100,000 keys, deep nesting, huge arrays
 * and strings, duplicate and prototype keys, unknown answers, bad times), odd ids and methods
 * never get a 5xx; a refused request adds nothing to the chain, an accepted one exactly one
 * record of kind "attempt" holding what was sent; another user's operation is refused.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_ANSWERS, attemptRequestSchema } from "@/lib/domain/attempts";
import { deepArrays as deep, manyKeys, OWN_OPERATION, operationIdSegment as idArb } from "./hostile-shapes";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";

let agentToken: string;
let agent: string;
let opId: string;
let othersOp: string;

const theirs = async () => (await db()).chainRecord.count({ where: { actor: agent } });

beforeAll(async () => {
  const p = await principal("viewer", ["ingest", "read"]);
  [agentToken, agent] = [p.token, p.email];
  opId = unique("op-fz-attempt");
  expect((await ingest(agentToken, { operation_id: opId, receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } })).status).toBe(201);
  const other = await principal("viewer", ["ingest"]);
  othersOp = unique("op-fz-attempt-other");
  expect((await ingest(other.token, { operation_id: othersOp, receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } })).status).toBe(201);
});

const good = fc.record(
  {
    answer: fc.constantFrom(...ATTEMPT_ANSWERS),
    text: fc.string({ minLength: 1, maxLength: 60 }),
    outcome: fc.constantFrom("verified", "uncertain", "divergent", "rejected"),
    at: fc.constantFrom("2026-12-06T10:00:00Z", "2026-12-06T10:00:00.123+01:00"),
    session: fc.uuid(),
    client: fc.record({ name: fc.string({ minLength: 1, maxLength: 20 }), version: fc.constantFrom("1.0.0", "2") }),
  },
  { requiredKeys: ["answer", "text"] },
);

const bodyArb = fc.oneof(
  good.map((b) => ({ raw: JSON.stringify(b) })),
  fc.json().map((j) => ({ raw: j })),
  fc.record({ answer: fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.constant(null)), text: fc.oneof(fc.string({ maxLength: 20 }), fc.integer()) }).map((b) => ({ raw: JSON.stringify(b) })),
  fc.constantFrom(
    { raw: "" },
    { raw: "{" },
    { raw: '{"answer":"refused","text":"a","text":"b"}' },
    { raw: '{"answer":"refused","text":"ok","__proto__":{"admin":true}}' },
    { raw: '{"answer":"refused","text":"\\u0000"}' },
    { raw: '{"answer":"refused","text":"\\ud800"}' },
    { raw: JSON.stringify({ answer: "refused", text: "" }) },
    { raw: JSON.stringify({ answer: "refused", text: "x".repeat(4001) }) },
    { raw: JSON.stringify({ answer: "refused", text: "t", at: "yesterday" }) },
    { raw: JSON.stringify({ answer: "refused", text: "t", client: { name: "a", extra: 1 } }) },
    { raw: JSON.stringify({ answer: "refused", text: "t", extra: 1 }) },
    { raw: JSON.stringify({ answer: "refused", text: { nested: deep(10) } }) },
    { raw: deep(5000) },
    { raw: manyKeys(100_000) },
    { raw: JSON.stringify({ answer: "refused", text: Array.from({ length: 200_000 }, () => 1) }) },
    { raw: JSON.stringify({ answer: "refused", text: "t", pad: "x".repeat(2_000_000) }) },
  ),
);
const methodArb = fc.constantFrom("GET", "POST", "POST", "POST", "DELETE", "PUT", "PATCH");

describe("fuzz: attempt records", () => {
  it("never answers a 5xx; a refused request adds nothing, an accepted attempt exactly one record", async () => {
    await fc.assert(
      fc.asyncProperty(methodArb, idArb, bodyArb, async (method, id, body) => {
        const path = `/api/v1/operations/${id === OWN_OPERATION ? opId : id}/attempts`;
        const before = await theirs();
        const withBody = method === "POST" || method === "PUT" || method === "PATCH";
        const res = await call(path, { method, token: agentToken, ...(withBody ? { raw: body.raw } : {}) });
        expect(res.status, `${method} ${path} ${body.raw.slice(0, 80)} → ${res.text.slice(0, 200)}`).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.body?.error?.code, res.text.slice(0, 200)).toEqual(expect.any(String));
          expect(await theirs()).toBe(before);
        } else if (method === "POST") {
          expect(res.status).toBe(201);
          // Only what the schema accepts is stored, as it was sent.
          const sent = attemptRequestSchema.parse(JSON.parse(body.raw));
          expect(res.body.attempt).toMatchObject({ answer: sent.answer, text: sent.text });
          expect(await theirs()).toBe(before + 1);
          const last = await (await db()).chainRecord.findFirstOrThrow({ where: { actor: agent }, orderBy: { seq: "desc" } });
          expect(last).toMatchObject({ kind: "attempt", operationId: opId });
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 200) },
    );
  }, 120_000);

  it("another user's operation is refused, and nothing is written", async () => {
    const before = await theirs();
    const res = await call(`/api/v1/operations/${othersOp}/attempts`, { token: agentToken, body: { answer: "refused", text: "not mine" } });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toMatch(/belongs to another user/);
    expect(await theirs()).toBe(before);
    expect(await (await db()).chainRecord.count({ where: { kind: "attempt", operationId: othersOp } })).toBe(0);
  });
});
