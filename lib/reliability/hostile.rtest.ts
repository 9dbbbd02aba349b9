import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startApp, type App } from "./harness";
import { hostileShapes, itemStatuses, sendWithHealthPolls } from "./hostile";
import { prepareHostile } from "./hostile-setup";

/**
 * TRUST.md "What no request may do": a maximum-size hostile batch is refused or processed in
 * bounded time, and the server keeps answering `/api/health` meanwhile. The bounds are loose
 * on purpose (a shared 2-core machine): the answer within 10 s, never a 5xx, and no health
 * poll (one every 100 ms) taking a second or more. Before set-based de-duplication and paced
 * work, the "reads" shape took minutes with health frozen throughout. Figures:
 * `npm run bench:hostile` (docs/BENCHMARKS.md).
 */
const dir = mkdtempSync(path.join(os.tmpdir(), "reconcile-hostile-"));
let app: App;
let token: string;

beforeAll(async () => {
  const url = `file:${path.join(dir, "hostile.db")}`;
  ({ token } = await prepareHostile(url));
  app = await startApp(url);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it.each(hostileShapes(`rtest-${process.pid}`).map((s) => [s.name, s] as const))("%s: answered (never 5xx) within 10 s while /api/health keeps answering in under 1 s", async (_name, shape) => {
  const run = await sendWithHealthPolls(app.base, token, shape.body());
  console.log(`${shape.name}: ${itemStatuses(run)} in ${Math.round(run.ms)} ms; worst /api/health ${Math.round(run.healthWorstMs)} ms over ${run.healthPolls} polls`);
  expect(run.status, run.answer.slice(0, 500)).toBeGreaterThanOrEqual(200);
  expect(run.status, run.answer.slice(0, 500)).toBeLessThan(500);
  expect(run.ms).toBeLessThan(10_000);
  expect(run.healthFailures).toBe(0);
  expect(run.healthWorstMs).toBeLessThan(1000);
  // Still healthy afterwards, and a batch answer never hides a 5xx item.
  expect((await fetch(`${app.base}/api/health`)).status).toBe(200);
  expect(itemStatuses(run)).not.toMatch(/\b5\d\d ×/);
});
