/**
 * Fuzz family for refusals (issue 47, item 3): a viewer's token sends random refused requests —
 * the instance's trail, projects, webhooks, the verdict log, /metrics — with random methods,
 * queries and hostile bodies. Never a 5xx; every 403 is counted in refusal_windows; and however
 * many are sent, the trails gain a bounded number of records from that principal (folded per
 * permission and window: lib/store/chain/refusals.ts).
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_PERMISSIONS_PER_WINDOW } from "@/lib/store/chain/refusals";
import { call, db, principal } from "@/lib/testing/integration";

let viewer: { email: string; token: string };
beforeAll(async () => {
  viewer = await principal("viewer", ["read"]);
});

const pathArb = fc.constantFrom("/api/v1/security-events", "/api/v1/projects", "/api/v1/webhooks", "/api/v1/verdict-exports", "/metrics", "/api/v1/users");
const queryArb = fc.oneof(
  fc.constant(""),
  fc.dictionary(fc.string({ maxLength: 12 }), fc.string({ maxLength: 30 }), { maxKeys: 4 }).map((d) => new URLSearchParams(d).toString()),
  fc.constantFrom("__proto__=1", `q=${"x".repeat(5_000)}`, "%zz=%"),
);
const bodyArb = fc.oneof(
  fc.json(),
  fc.constantFrom("", "{", '{"__proto__":{"admin":true}}', JSON.stringify({ url: "https://example.com/h", slug: "x".repeat(50_000) }), JSON.stringify(Array.from({ length: 10_000 }, () => 1))),
);

describe("fuzz: a viewer's refusals", () => {
  it("never a 5xx; each 403 is counted; the trails gain a bounded number of the viewer's records", async () => {
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(pathArb, queryArb, fc.constantFrom("GET", "POST", "DELETE", "PATCH"), bodyArb, async (path, query, method, raw) => {
        const res = await call(`${path}${query ? `?${query}` : ""}`, { method, token: viewer.token, ...(method !== "GET" ? { raw } : {}) });
        const context = `${method} ${path}?${query.slice(0, 60)} → ${res.status} ${res.text.slice(0, 160)}`;
        expect(res.status, context).toBeLessThan(500);
        if (res.status === 403) refused++;
        const d = await db();
        const windows = await d.refusalWindow.findMany({ where: { actor: viewer.email } });
        expect(windows.reduce((sum, w) => sum + w.count, 0), context).toBe(refused);
        // Two windows at most in a run of a few minutes; each: a record for each of its first
        // permissions and the folded rest, and their tallies.
        const records = (await d.instanceEvent.count({ where: { actor: viewer.email } })) + (await d.chainRecord.count({ where: { actor: viewer.email } }));
        expect(records, context).toBeLessThanOrEqual(2 * 2 * (MAX_PERMISSIONS_PER_WINDOW + 1) + 3);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 80) },
    );
    expect(refused).toBeGreaterThan(10);
  });
});
