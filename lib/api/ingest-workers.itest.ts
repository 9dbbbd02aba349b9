/**
 * The production server's fast path with its ingest worker threads (ingest-pool.ts), on a
 * database of its own: it says how many it runs, answers a batch through them, and refuses to
 * start on a count it cannot use.
 */
import { afterAll, describe, expect, it } from "vitest";
import { prepareDatabase, startApp, type App } from "@/lib/reliability/harness";
import { freshDatabase } from "@/lib/testing/own-server";

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

const record = (id: string) => ({
  operation_id: id,
  intent: { target: "crm contact", effect: "set the phone", fingerprint: `sha256:${id}` },
  receipt: { status: "accepted", receipt_id: `r-${id}`, observed_at: "2026-08-28T10:00:00Z" },
});

describe("RECONCILE_INGEST_WORKERS", () => {
  it("two workers: the server says so, and batches sent at once are each answered in full", async () => {
    const db = await freshDatabase("ingest_workers");
    cleanup.push(db.drop);
    const { tokens } = await prepareDatabase(db.url, "ingest-workers");
    const app: App = await startApp(db.url, { env: { RECONCILE_INGEST_WORKERS: "2" } });
    cleanup.push(() => app.stop());
    expect(app.output()).toContain("Ingest bodies are checked in 2 worker threads");
    const answers = await Promise.all(
      Array.from({ length: 12 }, async (_, b) => {
        const records = Array.from({ length: 40 }, (_, i) => (i === 7 ? { operation_id: `w-${b}-bad` } : record(`w-${b}-${i}`)));
        const res = await fetch(`${app.base}/api/v1/receipts`, {
          method: "POST",
          headers: { authorization: `Bearer ${tokens.ingest}`, "content-type": "application/json" },
          body: JSON.stringify({ records }),
        });
        return { status: res.status, body: (await res.json()) as { results: { index: number; status: number; operation_id?: string }[] } };
      }),
    );
    for (const [b, a] of answers.entries()) {
      expect(a.status).toBe(207);
      expect(a.body.results.map((r) => r.index)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      expect(a.body.results.filter((r) => r.status === 201).map((r) => r.operation_id)).toEqual(
        Array.from({ length: 40 }, (_, i) => `w-${b}-${i}`).filter((_, i) => i !== 7),
      );
      expect(a.body.results[7].status).toBe(422);
    }
    expect(await db.query("SELECT operation_id FROM operations")).toHaveLength(12 * 39);
  });

  it("a count it cannot use stops the server at start, saying why", async () => {
    const db = await freshDatabase("ingest_workers_bad");
    cleanup.push(db.drop);
    await expect(startApp(db.url, { env: { RECONCILE_INGEST_WORKERS: "lots" } })).rejects.toThrow(/RECONCILE_INGEST_WORKERS must be a whole number from 0 to 64, not "lots"/);
  });
});
