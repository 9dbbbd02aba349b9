/**
 * Fuzz family for the verifier endpoints (POST /api/v1/verifiers, GET/DELETE
 * /api/v1/verifiers/{name}, POST /api/v1/verifiers/{name}/dry-run): random and hostile bodies
 * (huge arrays, 100,000 keys, deep nesting, definitions with every field wrong), odd names and
 * methods never get a 5xx; a refused request stores nothing (no version, no chain record).
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE } from "@/lib/domain/fixtures/verifier-example";
import { call, chainCount, db, principal } from "@/lib/testing/integration";

let adminToken: string;

beforeAll(async () => {
  adminToken = (await principal("admin", ["admin"])).token;
});

/**
 * The example definition under this family's name, for a tool no test sends receipts of. With the
 * example's own tool (social.publish), an accepted definition stayed enabled in the suite's
 * database, and later tests' receipts of that tool got verifier checks whose records landed, up to
 * ten minutes later, inside another fuzz family's "this request added nothing" window.
 */
const FUZZED = { ...EXAMPLE, name: "fuzzed", tool: "fuzz.verifiers.no-receipts" };

const versions = async () => (await db()).verifierVersion.count();
const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
const deepObject = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);
const manyKeys = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(",")}}`;
const hugeArray = (n: number) => `[${Array.from({ length: n }, () => "0").join(",")}]`;

/** A definition with one field replaced by something hostile. */
const wrecked = fc
  .record({
    field: fc.constantFrom("name", "tool", "request", "expect", "window", "allow_hosts", "enabled"),
    value: fc.oneof(
      fc.json().map((j) => JSON.parse(j) as unknown),
      fc.constant(Array.from({ length: 50_000 }, (_, i) => i)),
      fc.constant(Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`h${i}`, "v"]))),
      fc.constant("x".repeat(100_000)),
    ),
  })
  .map(({ field, value }) => ({ raw: JSON.stringify({ ...FUZZED, [field]: value }) }));

const bodyArb = fc.oneof(
  fc.json().map((j) => ({ raw: j })),
  wrecked,
  fc.constantFrom(
    { raw: "" },
    { raw: "{" },
    { raw: '{"name":"a","name":"b"}' },
    { raw: '{"__proto__":{"admin":true}}' },
    { raw: deep(5000) },
    { raw: deepObject(3000) },
    { raw: manyKeys(100_000) },
    { raw: hugeArray(200_000) },
    { raw: JSON.stringify({ ...FUZZED, expect: Array.from({ length: 10_000 }, () => EXAMPLE.expect[0]) }) },
    { raw: JSON.stringify({ ...FUZZED, request: { ...EXAMPLE.request, headers: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`x-h${i}`, "v"])) } }) },
    { raw: JSON.stringify({ ...FUZZED, request: { ...EXAMPLE.request, url: "https://{intent.host}/x" } }) },
    { raw: JSON.stringify({ operation_id: "op-x", definition: JSON.parse(deepObject(40)) }) },
    { raw: JSON.stringify({ ...FUZZED, pad: "x".repeat(2_000_000) }) },
  ),
);
const nameArb = fc.oneof(fc.constant("fuzzed"), fc.string({ maxLength: 40 }).map(encodeURIComponent), fc.constantFrom("%00", "..", "%2e%2e", "a%2Fb", "x".repeat(300), "%E0%A4%A"));
const pathArb = fc.oneof(
  fc.constant("/api/v1/verifiers"),
  // ".." alone would leave /api/v1/verifiers/ (the client normalises it to /api/v1/, no route of these).
  nameArb.filter((n) => n !== ".." && n !== "%2e%2e").map((n) => `/api/v1/verifiers/${n}`),
  nameArb.map((n) => `/api/v1/verifiers/${n}/dry-run`),
);
const methodArb = fc.constantFrom("GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS");

describe("fuzz: the verifier endpoints", () => {
  it("never answer a 5xx; a refused request stores no version and adds nothing to the chain", async () => {
    await fc.assert(
      fc.asyncProperty(methodArb, pathArb, bodyArb, async (method, path, body) => {
        const before = [await chainCount(), await versions()];
        const withBody = method === "POST" || method === "PUT" || method === "PATCH";
        const res = await call(path, { method, token: adminToken, ...(withBody ? { raw: body.raw } : {}) });
        expect(res.status, `${method} ${path} ${body.raw.slice(0, 80)} → ${res.text.slice(0, 200)}`).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.body?.error?.code, res.text.slice(0, 200)).toEqual(expect.any(String));
          expect([await chainCount(), await versions()]).toEqual(before);
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 150) },
    );
  });

  it("each hostile shape is a clear 4xx at once", async () => {
    const cases: [string, number, RegExp][] = [
      [deep(5000), 422, /deeper than|nested/i],
      [manyKeys(100_000), 413, /larger than 0\.25 MiB/],
      [hugeArray(200_000), 413, /larger than 0\.25 MiB/],
      [JSON.stringify({ ...FUZZED, expect: Array.from({ length: 10_000 }, () => EXAMPLE.expect[0]) }), 413, /larger than 0\.25 MiB/],
      [JSON.stringify({ ...FUZZED, expect: Array.from({ length: 100 }, () => EXAMPLE.expect[0]) }), 422, /^expect has 100 items; at most 32 are accepted$/],
    ];
    for (const [raw, status, message] of cases) {
      const before = [await chainCount(), await versions()];
      const started = Date.now();
      const res = await call("/api/v1/verifiers", { token: adminToken, raw });
      expect([res.status, res.body?.error?.message], raw.slice(0, 60)).toEqual([status, expect.stringMatching(message)]);
      expect(Date.now() - started).toBeLessThan(2000);
      expect([await chainCount(), await versions()]).toEqual(before);
    }
  });
});
