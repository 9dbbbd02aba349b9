/**
 * Verifier checks across a crash (VERIFIERS.md "Running them"): the server is SIGKILLed while
 * checks are in flight and others are still due; a new server on the same database finishes
 * them. No check is lost, and none is recorded twice (a check taken over after its lease ran out
 * is performed again, but its read is recorded with finishJob in one transaction).
 */
import http from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startApp, type App } from "@/lib/reliability/harness";
import { socialVerifier } from "./social-service";
import { api, owedChecks, startVerifierApp, until, type VerifierApp } from "./testing/verifier-app";

// A lease of 6 s (above the checks' 5 s deadline) rather than the minute of production: the
// checks the dead server held come back that much sooner.
const ENV = { RECONCILE_VERIFIER_ALLOW_HTTP: "1", RECONCILE_VERIFIER_ALLOW_PRIVATE: "1", RECONCILE_VERIFIER_RETRY_MS: "100", RECONCILE_VERIFIER_TIMEOUT_MS: "5000", RECONCILE_JOB_LEASE_MS: "6000", SOCIAL_READ_TOKEN: "crash-token", RECONCILE_VERIFIER_ENV: "SOCIAL_READ_TOKEN" };
const OPS = 12;
const CHECKS = 4;

let first: VerifierApp;
let second: App | null = null;
let requests = 0;
let server: http.Server;
let port: number;

beforeAll(async () => {
  // Never there, and slow to say so: every check records an absent read, and some are in flight when the server dies.
  server = http.createServer((_req, res) => {
    requests++;
    setTimeout(() => res.writeHead(404, { "content-type": "application/json" }).end("{}"), 300).unref();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
  first = await startVerifierApp("verifiers-crash", ENV);
});
afterAll(async () => {
  await second?.stop();
  await first?.stop();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

it("SIGKILL with checks in flight and due: after a restart every check is recorded exactly once", { timeout: 150_000 }, async () => {
  const call = (base: string, path: string, body?: unknown) => api(base, first.token, path, body);
  const def = socialVerifier(`http://127.0.0.1:${port}`, { name: "crash", tool: "social.crash", checksAt: ["0s", "400ms", "1500ms"], pendingUntil: "3s" });
  expect((await call(first.app.base, "/api/v1/verifiers", def)).status).toBe(201);
  const ids = Array.from({ length: OPS }, (_, i) => `op-crash-${i}`);
  for (const id of ids) {
    const r = await call(first.app.base, "/api/v1/receipts", { operation_id: id, tool: { name: "social.crash" }, intent: { params: { text: "x" } }, receipt: { status: "accepted", receipt_id: id, observed_at: new Date().toISOString() } });
    expect(r.status).toBe(201);
  }
  // Some reads recorded, some in flight (held: the target answers after 300 ms), the rest still
  // due. Checks that end together commit in one group, so between groups none may be in flight:
  // wait for a moment when some are.
  await until("the first reads, and checks in flight", async () => {
    const [r] = await first.db.query<{ n: number | string }>("SELECT COUNT(*) AS n FROM chain_records WHERE kind = 'stage' AND stage = 'canonical_read'");
    const [inFlight] = await first.db.query<{ n: number | string }>("SELECT COUNT(*) AS n FROM job WHERE kind = 'verifier.check' AND status = 'pending' AND lease_owner IS NOT NULL");
    return Number(r.n) >= 3 && Number(inFlight.n) > 0 ? r : undefined;
  });
  await first.app.kill();
  const [before] = await first.db.query<{ n: number | string }>("SELECT COUNT(*) AS n FROM job WHERE kind = 'verifier.check' AND status = 'pending'");
  expect(Number(before.n)).toBeGreaterThan(0);
  // … among them some the dead server held (in flight): their lease has to run out first.
  const [held] = await first.db.query<{ n: number | string }>("SELECT COUNT(*) AS n FROM job WHERE kind = 'verifier.check' AND status = 'pending' AND lease_owner IS NOT NULL");
  expect(Number(held.n)).toBeGreaterThan(0);

  // What each operation is owed (a receipt ingested late on a loaded machine has its past checks folded into one).
  const owed = owedChecks(await first.db.query<{ payload: string }>("SELECT payload FROM job WHERE kind = 'verifier.check'"));
  expect(owed.size).toBe(OPS);
  const scheduled = [...owed.values()].reduce((n, c) => n + c.length, 0);

  second = await startApp(first.db.url, { env: ENV });
  // Jobs the dead server held come back when their lease (6 s here) ends.
  await until(
    "every check done",
    async () => {
      const rows = await first.db.query<{ status: string; n: number | string }>("SELECT status, COUNT(*) AS n FROM job WHERE kind = 'verifier.check' GROUP BY status");
      return rows.length === 1 && rows[0].status === "done" && Number(rows[0].n) === scheduled ? rows : undefined;
    },
    120_000,
  );
  for (const id of ids) {
    const op = (await call(second.base, `/api/v1/operations/${id}`)).body;
    const checks = op.stages.filter((s: any) => s.stage === "canonical_read").map((s: any) => s.payload.verifier.check);
    expect(checks.sort(), id).toEqual(owed.get(id));
    expect(checks.at(-1), id).toBe(CHECKS);
    expect([op.outcome, op.reason]).toEqual(["divergent", "the write was accepted but the canonical effect is absent"]);
  }
  expect(requests).toBeGreaterThanOrEqual(scheduled);
});
