/**
 * Fuzz family for notes (GET/POST /api/v1/operations/{id}/comments): random and hostile bodies
 * (100,000 keys, deep nesting, huge arrays and strings, duplicate keys, prototype keys), odd ids
 * and methods never get a 5xx; a refused request adds nothing to the chain, an accepted one adds
 * exactly one record holding the trimmed text.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { deepArrays as deep, manyKeys, OWN_OPERATION, operationIdSegment as idArb } from "./hostile-shapes";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";

let reviewToken: string;
let reviewer: string;
let opId: string;

/**
 * The records this reviewer's requests wrote (every record a request writes names its sender):
 * the server's own background work (a verifier's read, an expired approval) may append meanwhile.
 */
const theirs = async () => (await db()).chainRecord.count({ where: { actor: reviewer } });

beforeAll(async () => {
  const p = await principal("reviewer", ["review", "read"]);
  [reviewToken, reviewer] = [p.token, p.email];
  const agent = await principal("reviewer", ["ingest"]);
  opId = unique("op-fz-note");
  expect((await ingest(agent.token, { operation_id: opId, receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } })).status).toBe(201);
});


const bodyArb = fc.oneof(
  fc.json().map((j) => ({ raw: j })),
  fc.record({ text: fc.oneof(fc.string({ maxLength: 50 }), fc.string({ unit: "grapheme", maxLength: 30 }), fc.integer(), fc.constant(null), fc.array(fc.string())) }).map((b) => ({ raw: JSON.stringify(b) })),
  fc.constantFrom(
    { raw: "" },
    { raw: "{" },
    { raw: '{"text":"a","text":"b"}' },
    { raw: '{"text":"ok","__proto__":{"admin":true}}' },
    { raw: '{"text":"\\u0000"}' },
    { raw: '{"text":"\\ud800"}' },
    { raw: JSON.stringify({ text: " " }) },
    { raw: JSON.stringify({ text: "x".repeat(4001) }) },
    { raw: JSON.stringify({ text: { nested: deep(10) } }) },
    { raw: deep(5000) },
    { raw: manyKeys(100_000) },
    { raw: JSON.stringify({ text: Array.from({ length: 200_000 }, () => 1) }) },
    { raw: JSON.stringify({ text: "a note", pad: "x".repeat(2_000_000) }) },
  ),
);
const methodArb = fc.constantFrom("GET", "POST", "POST", "POST", "DELETE", "PUT", "PATCH", "OPTIONS");

describe("fuzz: notes", () => {
  it("never answers a 5xx; a refused request adds nothing, an accepted note exactly one record", async () => {
    await fc.assert(
      fc.asyncProperty(methodArb, idArb, bodyArb, async (method, id, body) => {
        const path = `/api/v1/operations/${id === OWN_OPERATION ? opId : id}/comments`;
        const before = await theirs();
        const withBody = method === "POST" || method === "PUT" || method === "PATCH";
        const res = await call(path, { method, token: reviewToken, ...(withBody ? { raw: body.raw } : {}) });
        expect(res.status, `${method} ${path} ${body.raw.slice(0, 80)} → ${res.text.slice(0, 200)}`).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.body?.error?.code, res.text.slice(0, 200)).toEqual(expect.any(String));
          expect(await theirs()).toBe(before);
        } else if (method === "POST") {
          expect(res.status).toBe(201);
          expect(await theirs()).toBe(before + 1);
          const sent = (JSON.parse(body.raw) as { text: string }).text;
          expect(res.body.comment.text).toBe(sent.trim());
          const last = await (await db()).chainRecord.findFirstOrThrow({ where: { actor: reviewer }, orderBy: { seq: "desc" } });
          expect(last).toMatchObject({ kind: "comment", operationId: opId });
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 200) },
    );
  });
});
