/**
 * Fuzz family for the claim endpoint (GET/POST/DELETE /api/v1/operations/{id}/claim): random and
 * hostile bodies, odd ids and methods never get a 5xx, and a refused request changes nothing.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { deepArrays as deep, manyKeys, OWN_OPERATION, operationIdSegment as idArb } from "./hostile-shapes";
import { call, chainCount, ingest, principal, unique } from "@/lib/testing/integration";

let reviewToken: string;
let opId: string;

beforeAll(async () => {
  reviewToken = (await principal("reviewer", ["review", "read"])).token;
  const agent = await principal("reviewer", ["ingest"]);
  opId = unique("op-fz-claim");
  expect((await ingest(agent.token, { operation_id: opId, receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } })).status).toBe(201);
});


const bodyArb = fc.oneof(
  fc.json().map((j) => ({ raw: j })),
  fc.record({ take_over: fc.oneof(fc.boolean(), fc.string(), fc.integer(), fc.constant(null), fc.array(fc.boolean())) }).map((b) => ({ raw: JSON.stringify(b) })),
  fc.constantFrom(
    { raw: "" },
    { raw: "{" },
    { raw: '{"take_over":true,"take_over":false}' },
    { raw: '{"__proto__":{"admin":true}}' },
    { raw: deep(5000) },
    { raw: manyKeys(100_000) },
    { raw: JSON.stringify({ take_over: true, pad: "x".repeat(2_000_000) }) },
  ),
);
const methodArb = fc.constantFrom("GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS");

describe("fuzz: the claim endpoint", () => {
  it("never answers a 5xx; refused requests add nothing to the chain", async () => {
    await fc.assert(
      fc.asyncProperty(methodArb, idArb, bodyArb, async (method, id, body) => {
        const path = `/api/v1/operations/${id === OWN_OPERATION ? opId : id}/claim`;
        const before = await chainCount();
        const withBody = method === "POST" || method === "PUT" || method === "PATCH";
        const res = await call(path, { method, token: reviewToken, ...(withBody ? { raw: body.raw } : {}) });
        expect(res.status, `${method} ${path} ${body.raw.slice(0, 80)} → ${res.text.slice(0, 200)}`).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.body?.error?.code, res.text.slice(0, 200)).toEqual(expect.any(String));
          expect(await chainCount()).toBe(before);
        }
        // Leave the operation unclaimed for the next case.
        if (res.status < 300 && method === "POST") await call(`/api/v1/operations/${opId}/claim`, { method: "DELETE", token: reviewToken });
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 200) },
    );
  });
});
