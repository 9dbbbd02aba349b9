/**
 * Issue 47, item 3: the lowest role cannot grow a trail without bound. One principal's refusals
 * of one permission fold into one window: the first is chained, the rest counted (refusal_windows),
 * and a closed window's tally is chained as one `authorization.refusals` record; a principal's
 * permissions beyond the first few in a window fold together. On the server's database, through
 * the real server (a viewer's token) and the store (windows placed in time).
 */
import { describe, expect, it } from "vitest";
import { call, db, principal, unique } from "@/lib/testing/integration";

const store = { refusals: () => import("./refusals") };

async function flood(path: string, token: string, n: number, init: { body?: unknown } = {}): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i += 10) statuses.push(...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, async () => (await call(path, { token, ...init })).status))));
  return statuses;
}

const windowRows = async (actor: string) =>
  (await db()).refusalWindow.findMany({ where: { actor }, orderBy: [{ windowEnd: "asc" }, { permission: "asc" }] });

describe("refusals, folded per principal, permission and window", () => {
  it("40 refusals of a viewer's token add one record to the instance trail (two if a window ends meanwhile), and count all 40", async () => {
    const viewer = await principal("viewer", ["read"]);
    const statuses = await flood("/api/v1/security-events", viewer.token, 40);
    expect(statuses.every((s) => s === 403)).toBe(true);
    const events = (await (await db()).instanceEvent.findMany({ where: { actor: viewer.email }, orderBy: { seq: "asc" } })).map((e) => JSON.parse(e.payload));
    const refused = events.filter((e) => e.type === "authorization.refused");
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeLessThanOrEqual(2);
    expect(refused[0]).toMatchObject({ permission: "instance:audit", path: "/api/v1/security-events", until: expect.any(String) });
    const rows = await windowRows(viewer.email);
    expect(rows.reduce((sum, r) => sum + r.count, 0)).toBe(40);
  });

  it("a project permission refused 30 times adds at most two records to the project's chain", async () => {
    const viewer = await principal("viewer", ["read"]);
    const statuses = await flood("/api/v1/webhooks", viewer.token, 30, { body: { url: "https://example.com/hook" } });
    expect(statuses.every((s) => s === 403)).toBe(true);
    expect(await (await db()).chainRecord.count({ where: { actor: viewer.email } })).toBeLessThanOrEqual(2);
    expect((await windowRows(viewer.email)).reduce((sum, r) => sum + r.count, 0)).toBe(30);
  });

  it("a closed window with more than one refusal is chained as one tally, with its count and first and last time", async () => {
    const { recordRefusal, refusalWindowEnd, REFUSAL_WINDOW_MS } = await store.refusals();
    const actor = `${unique("flood")}@itest.example`;
    const start = Date.parse("2020-01-01T00:00:00Z");
    const r = { permission: "operations:read", method: "GET", path: "/api/v1/operations", source: "127.0.0.1" };
    const chained: boolean[] = [];
    for (let i = 0; i < 5; i++) chained.push(await recordRefusal(actor, r, new Date(start + i * 1000)));
    expect(chained).toEqual([true, false, false, false, false]);
    // The next window opens: the last one's tally goes with it.
    expect(await recordRefusal(actor, r, new Date(start + REFUSAL_WINDOW_MS + 1000))).toBe(true);
    const records = (await (await db()).chainRecord.findMany({ where: { actor }, orderBy: { seq: "asc" } })).map((c) => JSON.parse(c.payload));
    expect(records).toEqual([
      expect.objectContaining({ type: "authorization.refused", permission: "operations:read", until: refusalWindowEnd(new Date(start)) }),
      expect.objectContaining({ type: "authorization.refusals", permission: "operations:read", count: 5, first_at: new Date(start).toISOString(), last_at: new Date(start + 4000).toISOString() }),
      expect.objectContaining({ type: "authorization.refused", permission: "operations:read", until: refusalWindowEnd(new Date(start + REFUSAL_WINDOW_MS)) }),
    ]);
  });

  it("a principal's refusals of many permissions in one window add a bounded number of records", async () => {
    const { recordRefusal, MAX_PERMISSIONS_PER_WINDOW } = await store.refusals();
    const actor = `${unique("many")}@itest.example`;
    const at = new Date(Date.parse("2020-02-01T00:00:00Z"));
    for (let p = 0; p < 20; p++) for (let i = 0; i < 3; i++) await recordRefusal(actor, { permission: `perm:${p}`, method: "GET", path: `/p/${p}`, source: null }, at);
    expect(await (await db()).chainRecord.count({ where: { actor } })).toBe(MAX_PERMISSIONS_PER_WINDOW + 1);
    const rows = await windowRows(actor);
    expect(rows).toHaveLength(MAX_PERMISSIONS_PER_WINDOW + 1);
    expect(rows.find((w) => w.permission === "*")).toMatchObject({ count: (20 - MAX_PERMISSIONS_PER_WINDOW) * 3 });
    expect(rows.reduce((sum, w) => sum + w.count, 0)).toBe(60);
  });
});
