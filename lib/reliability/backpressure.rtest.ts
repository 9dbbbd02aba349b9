import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { fullRecord, startApp, type App } from "./harness";
import { prepareHostile } from "./hostile-setup";
import { signIn } from "./load";

/**
 * TRUST.md "Backpressure, not memory growth": with the group-commit queue bounded at 400
 * records waiting (RECONCILE_INGEST_QUEUE_MAX), a flood of batches is partly refused with 429
 * `overloaded` and a `Retry-After` in seconds, through the fast path (bearer token) and the
 * Next.js route (session cookie) alike; every request answered 2xx is stored whole, and every
 * refused one left nothing behind.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), "reconcile-backpressure-"));
let app: App | null = null;
afterAll(async () => {
  await app?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it("a flood past the queue's bound gets 429 overloaded with Retry-After; everything answered 2xx is stored, nothing refused is", async () => {
  const url = `file:${path.join(dir, "bp.db")}`;
  const { token, email, password } = await prepareHostile(url);
  app = await startApp(url, { env: { RECONCILE_INGEST_QUEUE_MAX: "400" } });
  const base = app.base;
  const cookie = await signIn(base, email, password);
  const batch = (r: number) => ({ records: Array.from({ length: 400 }, (_, i) => fullRecord(`bp-${r}-${i}`, `bp-traj-${r}`)) });
  const answers = await Promise.all(
    Array.from({ length: 60 }, async (_, r) => {
      const viaSession = r % 3 === 0;
      const res = await fetch(`${base}/api/v1/receipts`, {
        method: "POST",
        headers: viaSession ? { cookie, "content-type": "application/json", "sec-fetch-site": "same-origin" } : { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(batch(r)),
      });
      return { r, viaSession, status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as { error?: { code: string } } };
    }),
  );
  const refused = answers.filter((a) => a.status === 429);
  const stored = answers.filter((a) => a.status === 200);
  expect(answers.filter((a) => a.status !== 429 && a.status !== 200)).toEqual([]);
  expect(refused.length).toBeGreaterThan(0);
  expect(stored.length).toBeGreaterThan(0);
  for (const a of refused) {
    expect(a.body.error?.code).toBe("overloaded");
    expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
  }
  // Both doors refuse: the fast path and the Next.js route (when the flood reached it there).
  expect(refused.some((a) => !a.viaSession)).toBe(true);
  const read = async (id: string) => (await fetch(`${base}/api/v1/operations/${id}`, { headers: { authorization: `Bearer ${token}` } })).status;
  for (const a of stored) for (const i of [0, 157, 399]) expect(await read(`bp-${a.r}-${i}`)).toBe(200);
  for (const a of refused) for (const i of [0, 157, 399]) expect(await read(`bp-${a.r}-${i}`)).toBe(404);
  console.log(`flood of 60 × 400 records: ${stored.length} stored, ${refused.length} refused (429; ${refused.filter((a) => a.viaSession).length} through the Next.js route)`);
});
