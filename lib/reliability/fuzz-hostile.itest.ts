import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { baseUrl, chainCount, principal, unique } from "@/lib/testing/integration";
import { MAX_CONTAINERS } from "@/lib/domain/json";
import { manyKeys } from "./hostile";

/**
 * Hostile shapes as fuzz families (TRUST.md "What no request may do"), beside fuzz.itest.ts and
 * run like it on SQLite and PostgreSQL: many canonical reads for one operation, objects of up
 * to 120,000 keys, deep nesting around and far past the 64-level limit, strings around the
 * 1 MiB record limit, and batch arrays around and far past 500 records. fast-check picks the
 * sizes. Oracle: every answer is a 2xx, 207 or 4xx, never a 5xx; a 4xx has the documented
 * error shape; a request refused whole adds nothing to the chain; batch items are never 5xx;
 * the server is healthy after every case. Each case can be 4 MiB, so the counts are small:
 * RELIABILITY_FUZZ_RUNS (default 1,000) / 100 per family.
 */
const RUNS = Math.max(3, Math.round(Number(process.env.RELIABILITY_FUZZ_RUNS || 1000) / 100));
const MiB = 1024 * 1024;
let token: string;

beforeAll(async () => {
  ({ token } = await principal("admin", ["ingest", "verify", "read"]));
});

type Answer = { status: number; body: any; text: string };

async function send(body: string): Promise<Answer> {
  const res = await fetch(`${baseUrl}/api/v1/receipts`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // judged below
  }
  return { status: res.status, body: parsed, text };
}

/** Sends one hostile body and holds the answer against the oracle. */
async function judge(body: string, what: string): Promise<Answer> {
  const before = await chainCount();
  const a = await send(body);
  const context = `${what} (${(body.length / MiB).toFixed(2)} MiB) → ${a.status} ${a.text.slice(0, 300)}`;
  expect(a.status, context).toBeGreaterThanOrEqual(200);
  expect(a.status, context).toBeLessThan(500);
  if (a.status >= 400) {
    expect(a.body?.error?.code, context).toEqual(expect.any(String));
    expect(a.body?.error?.message, context).toEqual(expect.any(String));
    expect(await chainCount(), `${context}: a refused request stored nothing`).toBe(before);
  }
  if (a.status === 207 || (a.status === 200 && Array.isArray(a.body?.results))) {
    for (const item of a.body.results) expect(item.status, context).toBeLessThan(500);
  }
  const health = await fetch(`${baseUrl}/api/health`);
  expect(health.status, `healthy after ${context}`).toBe(200);
  return a;
}

const past = (ms: number) => new Date(Date.parse("2026-08-28T10:00:00Z") + ms).toISOString();
const opts = { numRuns: RUNS, endOnFailure: true } as const;

describe("hostile fuzz families", () => {
  it("many canonical reads for one operation: records × reads, distinct or repeated", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 1001 }), fc.integer({ min: 1, max: 1000 }), async (records, reads, distinct) => {
        const id = unique("fzh-reads");
        const batch = Array.from({ length: records }, (_, r) => ({
          operation_id: id,
          canonical_read: Array.from({ length: reads }, (_, j) => ({ status: "match", observed_at: past(((r * reads + j) % distinct) * 1000), evidence: { object_id: "o", fingerprint: `f${(r * reads + j) % distinct}` } })),
        }));
        const body = JSON.stringify({ records: batch });
        const a = await judge(body, `${records} records × ${reads} reads (${distinct} distinct)`);
        // 1,001 reads in one record is past the documented 1,000.
        if (reads > 1000 && body.length <= 4 * MiB) expect(a.status).toBe(207);
      }),
      opts,
    );
  });

  it("objects of many keys in params, receipt params and an unknown envelope field", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(1_000, 50_000, 100_000, 120_000), fc.constantFrom("intent", "receipt", "envelope"), async (keys, where) => {
        const id = unique("fzh-keys");
        const obj = manyKeys(keys);
        const record =
          where === "intent"
            ? { operation_id: id, intent: { params: obj } }
            : where === "receipt"
              ? { operation_id: id, receipt: { status: "accepted", observed_at: past(0), params: obj } }
              : { operation_id: id, extra: obj, intent: { effect: "e" } };
        const body = JSON.stringify(record);
        const a = await judge(body, `${keys} keys in ${where}`);
        expect(a.status, `${keys} keys`).toBe(body.length > MiB ? 413 : 201);
      }),
      opts,
    );
  });

  it("deep nesting of arrays and objects, wide and narrow", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(10, 58, 60, 61, 62, 200, 100_000), fc.integer({ min: 1, max: 3000 }), fc.boolean(), async (depth, width, objects) => {
        const one = objects ? `${'{"a":'.repeat(depth)}0${"}".repeat(depth)}` : `${"[".repeat(depth)}0${"]".repeat(depth)}`;
        const copies = Math.max(1, Math.min(width, Math.floor((MiB - 200) / (one.length + 1))));
        const body = `{"operation_id":"${unique("fzh-deep")}","intent":{"params":{"deep":[${Array(copies).fill(one).join(",")}]}}}`;
        const a = await judge(body, `${copies} × depth ${depth} ${objects ? "objects" : "arrays"}`);
        // record (0) → intent → params → deep → the nested value: past 64 levels is 422, and so
        // is a record of more than MAX_CONTAINERS arrays and objects (4 + one per level a copy).
        expect(a.status).toBe(depth + 4 > 64 || 4 + copies * depth > MAX_CONTAINERS ? 422 : 201);
      }),
      opts,
    );
  });

  it("strings around the 1 MiB record limit, in params and in evidence", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: MiB - 200, max: MiB + 100 }), fc.constantFrom("params", "evidence"), async (length, where) => {
        const id = unique("fzh-string");
        const text = "x".repeat(length - 150);
        const record = where === "params" ? { operation_id: id, intent: { params: { text } } } : { operation_id: id, canonical_read: { status: "match", observed_at: past(0), evidence: text } };
        const body = JSON.stringify(record);
        const a = await judge(body, `a ${text.length}-character string in ${where}`);
        // Evidence text is at most 65,536 characters (422); a body over 1 MiB is 413 either way.
        expect(a.status).toBe(body.length > MiB ? 413 : where === "evidence" ? 422 : 201);
      }),
      opts,
    );
  });

  it("batch arrays around and far past 500 records, of valid and of junk items", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0, 1, 499, 500, 501, 5_000, 1_000_000), fc.constantFrom("valid", "empty", "numbers"), async (n, kind) => {
        const prefix = unique("fzh-batch");
        const item = (i: number) => (kind === "valid" ? JSON.stringify({ operation_id: `${prefix}-${i}`, intent: { effect: "e" } }) : kind === "empty" ? "{}" : "1");
        // Past 32 MiB the server closes the connection by design (API.md): keep bodies under 8 MiB.
        const count = kind === "valid" ? Math.min(n, 100_000) : n;
        const parts: string[] = [];
        for (let i = 0; i < count; i++) parts.push(item(i));
        const body = `{"records":[${parts.join(",")}]}`;
        const a = await judge(body, `${count} ${kind} records`);
        if (body.length > 4 * MiB || count > 500) expect(a.status).toBe(413);
        else if (n === 0) expect(a.status).toBe(422);
        else expect(a.status).toBe(kind === "valid" ? 200 : 207);
      }),
      opts,
    );
  });
});
