/**
 * Fuzz family for approvals (GET/POST /api/v1/operations/{id}/approval, POST …/approval/use,
 * GET /api/v1/approvals, and the `approval` request an intent carries): random and hostile
 * bodies (100,000 keys, deep nesting, huge arrays and strings, duplicate and prototype keys),
 * odd ids, waits and methods never get a 5xx; a refused request adds nothing to the chain, an
 * accepted decision or use exactly one approval record.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { deepArrays as deep, manyKeys, OWN_OPERATION, operationIdSegment as idArb } from "./hostile-shapes";
import { call, chainCount, db, ingest, principal, unique } from "@/lib/testing/integration";

let agent: string;
let reviewer: string;
let opId: string;
/** Held calls that outlive the suite: an expiry would append a record during a later test, whose count of the chain it would upset. */
const DAY = 24 * 3600 * 1000;
const approval = () => ({ status: "pending", expires_at: new Date(Date.now() + DAY).toISOString(), rule: "/amount > 100", rule_version: "r1" });

beforeAll(async () => {
  agent = (await principal("viewer", ["ingest", "read"])).token;
  reviewer = (await principal("reviewer", ["review", "read"])).token;
  opId = unique("op-fz-approval");
  expect((await ingest(agent, { operation_id: opId, intent: { params: { amount: 500 } }, approval: approval() })).status).toBe(201);
});

const hostile = [
  "",
  "{",
  '{"decision":"approve","decision":"deny","reason":"x"}',
  '{"decision":"approve","reason":"ok","__proto__":{"admin":true}}',
  '{"decision":"approve","reason":"\\u0000"}',
  '{"decision":"deny","reason":"\\ud800"}',
  JSON.stringify({ decision: "approve", reason: "x".repeat(2001) }),
  JSON.stringify({ decision: "approve", reason: deep(10) }),
  JSON.stringify({ params_digest: "sha256:" + "0".repeat(64), extra: Array.from({ length: 200_000 }, () => 1) }),
  deep(5000),
  manyKeys(100_000),
  JSON.stringify({ decision: "approve", reason: "ok", pad: "x".repeat(2_000_000) }),
];
const bodyArb = fc.oneof(
  fc.json().map((raw) => ({ raw })),
  fc
    .record({ decision: fc.oneof(fc.constantFrom("approve", "deny", "maybe", ""), fc.integer()), reason: fc.oneof(fc.string({ maxLength: 40 }), fc.constant(null)) }, { requiredKeys: [] })
    .map((b) => ({ raw: JSON.stringify(b) })),
  fc.record({ params_digest: fc.oneof(fc.string({ maxLength: 80 }), fc.constant("sha256:" + "a".repeat(64))) }).map((b) => ({ raw: JSON.stringify(b) })),
  fc.constantFrom(...hostile).map((raw) => ({ raw })),
);
const pathArb = fc.constantFrom("/approval", "/approval/use", "/approval?wait=", "/approval?wait=1", "/approval?wait=-1", "/approval?wait=31", "/approval?wait=abc", "/approval?wait=1e9", "/approval?wait=%00");
const methodArb = fc.constantFrom("GET", "POST", "POST", "POST", "DELETE", "PUT", "PATCH", "OPTIONS");

describe("fuzz: approvals", () => {
  it("never answers a 5xx; a refused request adds nothing, an accepted one exactly one approval record", async () => {
    await fc.assert(
      fc.asyncProperty(methodArb, idArb, pathArb, bodyArb, async (method, id, rest, body) => {
        // Each endpoint with a token it authorizes (a refused authorization is a chained security event).
        const who = rest.startsWith("/approval/use") ? "agent" : "reviewer";
        const path = `/api/v1/operations/${id === OWN_OPERATION ? opId : id}${rest}`;
        const before = await chainCount();
        const withBody = method === "POST" || method === "PUT" || method === "PATCH";
        const res = await call(path, { method, token: who === "agent" ? agent : reviewer, ...(withBody ? { raw: body.raw } : {}) });
        expect(res.status, `${method} ${path} ${body.raw.slice(0, 80)} → ${res.text.slice(0, 200)}`).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.body?.error?.code, res.text.slice(0, 200)).toEqual(expect.any(String));
          // An approval found expired while refusing is recorded; nothing else may be.
          expect(await chainCount()).toBe(before);
        } else if (method === "POST") {
          expect(res.status).toBe(201);
          expect(await chainCount()).toBe(before + 1);
          const last = await (await db()).chainRecord.findFirstOrThrow({ orderBy: { seq: "desc" } });
          expect(last).toMatchObject({ kind: "approval", operationId: opId });
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 150) },
    );
  });

  it("refuses hostile approval requests at ingest with a 4xx, storing nothing", async () => {
    const shapes: unknown[] = [
      "yes",
      [approval()],
      { ...approval(), status: "approved" },
      { ...approval(), expires_at: "tomorrow" },
      { ...approval(), rule: "x".repeat(501) },
      { ...approval(), rule: { nested: JSON.parse(deep(30)) } },
      { ...approval(), extra: Array.from({ length: 100_000 }, () => 1) },
      JSON.parse(manyKeys(100_000)),
    ];
    for (const shape of shapes) {
      const before = await chainCount();
      const res = await ingest(agent, { operation_id: unique("op-fz-req"), intent: { params: {} }, approval: shape });
      // Too large to read at all (413), or named as the approval request that is wrong (422).
      expect([413, 422], JSON.stringify(shape).slice(0, 80)).toContain(res.status);
      if (res.status === 422) expect(res.body.error.message).toMatch(/approval/);
      expect(await chainCount()).toBe(before);
    }
  });

  it("lists held calls with any query without a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom("status", "limit", "cursor", "x"), fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom("pending", "approved", "0", "201", "-1"))), async (q) => {
        const res = await call(`/api/v1/approvals?${new URLSearchParams(q)}`, { token: reviewer });
        expect(res.status).toBeLessThan(500);
        if (res.status === 200) expect(Array.isArray(res.body.rows)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });
});
