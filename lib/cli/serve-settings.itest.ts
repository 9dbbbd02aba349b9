import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { prepareDatabase, startApp, type App } from "@/lib/reliability/harness";

/**
 * RECONCILE_MAX_CLOCK_SKEW is read when the production server starts (lib/cli/serve.ts): a value
 * that means nothing stops the start, naming the setting, instead of failing every ingest
 * request later. A value that means something is the one ingest applies.
 */
const tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-serve-settings-"));
const before = process.env.DATABASE_URL;
let app: App | null = null;

afterEach(async () => {
  await app?.stop();
  app = null;
});
afterAll(() => {
  process.env.DATABASE_URL = before;
});

it.each(["5 minutes", "-1", "NaN"])("RECONCILE_MAX_CLOCK_SKEW=%j stops the server from starting, naming the setting", async (value) => {
  const url = `file:${path.join(tmp, `bad-${value.replace(/\W/g, "_")}.db`)}`;
  await prepareDatabase(url, "bad");
  await expect(startApp(url, { env: { RECONCILE_MAX_CLOCK_SKEW: value } })).rejects.toThrow(/RECONCILE_MAX_CLOCK_SKEW must be a number of seconds ≥ 0, not/);
});

it("a valid RECONCILE_MAX_CLOCK_SKEW is the bound ingest applies", async () => {
  const url = `file:${path.join(tmp, "ten.db")}`;
  const { tokens } = await prepareDatabase(url, "ten");
  app = await startApp(url, { env: { RECONCILE_MAX_CLOCK_SKEW: "10" } });
  const send = async (id: string, aheadSeconds: number) => {
    const record = { operation_id: id, receipt: { status: "accepted", observed_at: new Date(Date.now() + aheadSeconds * 1000).toISOString() } };
    const res = await fetch(`${app!.base}/api/v1/receipts`, { method: "POST", headers: { authorization: `Bearer ${tokens.ingest}`, "content-type": "application/json" }, body: JSON.stringify(record) });
    return { status: res.status, body: (await res.json()) as { error?: { code?: string } } };
  };
  expect((await send("skew-near", 2)).status).toBe(201);
  // Within the default five minutes, beyond the ten seconds set here.
  const far = await send("skew-far", 60);
  expect(far.status).toBe(422);
  expect(JSON.stringify(far.body)).toContain("observed_in_future");
});
