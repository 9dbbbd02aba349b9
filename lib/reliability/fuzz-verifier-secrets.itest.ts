/**
 * Fuzz family for the verifier secrets (GET /api/v1/verifier-secrets, PUT/DELETE
 * /api/v1/verifier-secrets/{name}): random and hostile bodies (huge arrays, 100,000 keys, deep
 * nesting, values with line breaks or 100,000 characters), odd names and methods never get a 5xx;
 * a refused request stores nothing (no secret, no chain record), and no answer ever carries a
 * stored value.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, chainCount, db, principal } from "@/lib/testing/integration";

let adminToken: string;
const KEPT = "fuzz-kept-value-31337";

beforeAll(async () => {
  adminToken = (await principal("admin", ["admin"])).token;
  // One secret stored before: no answer may ever show its value.
  expect((await call("/api/v1/verifier-secrets/FUZZ_KEPT", { method: "PUT", token: adminToken, body: { value: KEPT } })).status).toBeLessThan(300);
});
afterAll(async () => {
  await (await db()).verifierSecret.deleteMany({ where: { name: { startsWith: "FUZZ" } } });
});

const secrets = async () => (await db()).verifierSecret.count();
const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
const deepObject = (n: number) => '{"value":'.repeat(n) + '"x"' + "}".repeat(n);
const manyKeys = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(",")}}`;
const hugeArray = (n: number) => `[${Array.from({ length: n }, () => "0").join(",")}]`;

const bodyArb = fc.oneof(
  fc.json().map((j) => ({ raw: j })),
  fc.string({ maxLength: 60 }).map((value) => ({ raw: JSON.stringify({ value }) })),
  fc.jsonValue().map((value) => ({ raw: JSON.stringify({ value }) })),
  fc.constantFrom(
    { raw: "" },
    { raw: "{" },
    { raw: '{"value":"a","value":"b"}' },
    { raw: '{"__proto__":{"admin":true}}' },
    { raw: '{"value":"a\\r\\nX-Injected: 1"}' },
    { raw: JSON.stringify({ value: "x".repeat(100_000) }) },
    { raw: JSON.stringify({ value: "ok", extra: 1 }) },
    { raw: deep(5000) },
    { raw: deepObject(3000) },
    { raw: manyKeys(100_000) },
    { raw: hugeArray(200_000) },
    { raw: JSON.stringify({ value: "x", pad: "y".repeat(2_000_000) }) },
  ),
);
const nameArb = fc.oneof(
  fc.constantFrom("FUZZ_A", "FUZZ_KEPT", "FUZZ_B"),
  fc.string({ maxLength: 70 }).map(encodeURIComponent),
  fc.constantFrom("%00", "a%2Fb", "x".repeat(300), "%E0%A4%A", "FUZZ%0D%0A", "1FUZZ"),
);
// ".." alone would leave /api/v1/ (the client normalises it): no route of these.
const pathArb = fc.oneof(fc.constant("/api/v1/verifier-secrets"), nameArb.filter((n) => n !== ".." && n !== "%2e%2e" && n !== ".").map((n) => `/api/v1/verifier-secrets/${n}`));
const methodArb = fc.constantFrom("GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS");

describe("fuzz: the verifier secrets", () => {
  it("never answer a 5xx or a stored value; a refused request stores nothing and adds nothing to the chain", async () => {
    await fc.assert(
      fc.asyncProperty(methodArb, pathArb, bodyArb, async (method, path, body) => {
        const before = [await chainCount(), await secrets()];
        const withBody = method === "POST" || method === "PUT" || method === "PATCH";
        const res = await call(path, { method, token: adminToken, ...(withBody ? { raw: body.raw } : {}) });
        const context = `${method} ${path} ${body.raw.slice(0, 80)} → ${res.text.slice(0, 200)}`;
        expect(res.status, context).toBeLessThan(500);
        expect(res.text, context).not.toContain(KEPT);
        if (res.status >= 400) {
          expect(res.body?.error?.code, context).toEqual(expect.any(String));
          expect([await chainCount(), await secrets()], context).toEqual(before);
        }
        // FUZZ_KEPT may be replaced or deleted by a case: put it back as it was.
        if (path.endsWith("/FUZZ_KEPT") && res.status < 300 && method !== "GET") {
          await call("/api/v1/verifier-secrets/FUZZ_KEPT", { method: "PUT", token: adminToken, body: { value: KEPT } });
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 150) },
    );
  });

  it("each hostile shape is a clear 4xx at once, and stores nothing", async () => {
    const cases: [string, number, RegExp][] = [
      [deep(5000), 422, /^send \{"value": "…"\}$/],
      [manyKeys(100_000), 413, /larger than/],
      [hugeArray(200_000), 413, /larger than/],
      [JSON.stringify({ value: "x".repeat(100_000) }), 413, /larger than/],
      [JSON.stringify({ value: "x".repeat(9000) }), 422, /^value has 9,000 characters; at most 8,192 are accepted$/],
      ['{"value":"a\\nb"}', 422, /^value must have at least 8 characters/],
      ['{"value":"abcdefgh\\nb"}', 422, /^value must be one line of printable ASCII/],
      [JSON.stringify({ value: "ok", extra: 1 }), 422, /unknown field "extra"/],
    ];
    for (const [raw, status, message] of cases) {
      const before = [await chainCount(), await secrets()];
      const started = Date.now();
      const res = await call("/api/v1/verifier-secrets/FUZZ_SHAPE", { method: "PUT", token: adminToken, raw });
      expect([res.status, res.body?.error?.message], raw.slice(0, 60)).toEqual([status, expect.stringMatching(message)]);
      expect(Date.now() - started).toBeLessThan(2000);
      expect([await chainCount(), await secrets()]).toEqual(before);
    }
  });
});
