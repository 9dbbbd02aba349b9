import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { prepareDatabase, startApp, type App } from "./harness";
import { contentionInLog, formatTable, runMixedLoad, runWriterSweep, seedOperations, signIn } from "./load";

const dir = mkdtempSync(path.join(os.tmpdir(), "reconcile-load-"));
let app: App | null = null;
afterAll(async () => {
  await app?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it("every endpoint at once at 50 connections, then a writer sweep: no 5xx, no lock error reaches a client", async () => {
  const url = `file:${path.join(dir, "load.db")}`;
  const { tokens, email, password } = await prepareDatabase(url, "load");
  app = await startApp(url);
  const cookie = await signIn(app.base, email, password);
  const ctx = { bases: [app.base], token: tokens, cookie };
  const seeded = await seedOperations(ctx, 400, 40);
  const seconds = Number(process.env.RELIABILITY_LOAD_SECONDS || 8);
  const mixed = await runMixedLoad(ctx, seconds, seeded);
  console.log(formatTable(mixed));
  const sweep = [
    ...(await runWriterSweep(ctx, "ingest", [1, 4, 16], 2, [])),
    ...(await runWriterSweep(ctx, "corrections", [1, 4, 16], 2, seeded.divergent.slice(6))),
  ];
  console.log(formatTable(sweep));
  for (const row of [...mixed, ...sweep]) {
    expect(row.failureSamples, row.endpoint).toEqual([]);
    expect(row.failures, row.endpoint).toBe(0);
    expect(row.requests, row.endpoint).toBeGreaterThan(0);
  }
  expect(contentionInLog(app.output())).toEqual([]);
});
