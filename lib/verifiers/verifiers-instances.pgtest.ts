/**
 * Verifier checks with two app instances on one PostgreSQL (RELIABILITY_DATABASE_URL), both
 * running the job worker and committing results in groups: every check is performed and recorded
 * exactly once (each operation has one read for each check it was owed, the window's end always),
 * and the checks' results were committed in fewer transactions than there are checks
 * (PostgreSQL's xmin: the transaction that last wrote a row).
 */
import http from "node:http";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { prepareDatabase, startApp, type App, type Tokens } from "@/lib/reliability/harness";
import { disconnect } from "@/lib/store/db/db";
import { socialVerifier } from "./social-service";
import { owedChecks, until } from "./testing/verifier-app";
import { resetPublicSchema } from "@/lib/testing/drop-database";

const url = process.env.RELIABILITY_DATABASE_URL!;
const ENV = { RECONCILE_VERIFIER_ALLOW_HTTP: "1", RECONCILE_VERIFIER_ALLOW_PRIVATE: "1", RECONCILE_VERIFIER_RETRY_MS: "100", RECONCILE_VERIFIER_TIMEOUT_MS: "5000", SOCIAL_READ_TOKEN: "instances-token", RECONCILE_VERIFIER_ENV: "SOCIAL_READ_TOKEN" };
const OPS = 60;
// Three checks in the window and one at its end.
const CHECKS = 4;

let apps: App[] = [];
let tokens: Tokens;
let service: http.Server;
let requests = 0;

beforeAll(async () => {
  await resetPublicSchema(url);
  tokens = (await prepareDatabase(url, "verifier-instances")).tokens;
  // Never there, after 5–40 ms: every check records an absent read, and checks end at different times.
  service = http.createServer((_req, res) => {
    requests++;
    setTimeout(() => res.writeHead(404, { "content-type": "application/json" }).end("{}"), 5 + Math.floor(Math.random() * 35)).unref();
  });
  await new Promise<void>((r) => service.listen(0, "127.0.0.1", r));
  const port = (service.address() as { port: number }).port;
  process.env.DATABASE_URL = url;
  const { saveVerifierVersion } = await import("@/lib/store/settings/verifiers");
  const { verifierDefinitionSchema } = await import("@/lib/domain/verifier");
  const def = socialVerifier(`http://127.0.0.1:${port}`, { name: "instances", tool: "social.instances", checksAt: ["0s", "300ms", "800ms"], pendingUntil: "1s" });
  await saveVerifierVersion(verifierDefinitionSchema.parse(def), "itest");
  await disconnect();
  apps = await Promise.all([startApp(url, { env: ENV }), startApp(url, { env: ENV })]);
}, 180_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  service?.closeAllConnections();
  await new Promise((r) => service?.close(r));
  await disconnect();
});

it("two instances perform and record every check once, in groups", async () => {
  const ids = Array.from({ length: OPS }, (_, i) => `op-inst-${i}`);
  // Receipts through both instances, in batches: their checks fall due together.
  for (let b = 0; b < OPS / 10; b++) {
    const records = ids.slice(b * 10, b * 10 + 10).map((id) => ({
      operation_id: id,
      tool: { name: "social.instances" },
      intent: { params: { text: "x" } },
      receipt: { status: "accepted", receipt_id: id, observed_at: new Date().toISOString() },
    }));
    const res = await fetch(`${apps[b % 2].base}/api/v1/receipts`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.ingest}`, "content-type": "application/json" },
      body: JSON.stringify({ records }),
    });
    expect(res.status, await res.text()).toBe(200);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // The checks were scheduled with the receipts, in their transaction; the window's end is never folded away.
    const owed = owedChecks((await client.query<{ payload: string }>("SELECT payload FROM job WHERE kind = 'verifier.check'")).rows);
    expect(owed.size).toBe(OPS);
    for (const [id, checks] of owed) expect(checks.at(-1), id).toBe(CHECKS);
    const scheduled = [...owed.values()].reduce((n, c) => n + c.length, 0);
    let last: unknown[] = [];
    await until(
      "every check done",
      async () => {
        const { rows } = await client.query("SELECT status, attempts, last_error, COUNT(*) AS n FROM job WHERE kind = 'verifier.check' GROUP BY status, attempts, last_error");
        last = rows;
        return rows.length === 1 && rows[0].status === "done" && Number(rows[0].n) === scheduled ? rows : undefined;
      },
      120_000,
    ).catch((e) => {
      throw new Error(`${e.message}; the jobs: ${JSON.stringify(last)}`);
    });
    const { rows: reads } = await client.query<{ operation_id: string; checks: number[] }>(
      "SELECT operation_id, array_agg((payload::jsonb -> 'data' -> 'verifier' ->> 'check')::int ORDER BY (payload::jsonb -> 'data' -> 'verifier' ->> 'check')::int) AS checks FROM chain_records WHERE kind = 'stage' AND stage = 'canonical_read' GROUP BY operation_id",
    );
    // Each operation's owed checks, each recorded exactly once.
    expect(new Map(reads.map((r) => [r.operation_id, r.checks]))).toEqual(owed);
    expect(requests).toBeGreaterThanOrEqual(scheduled);
    // The results were committed in groups: fewer transactions wrote the finished jobs than there are checks.
    const { rows: tx } = await client.query("SELECT COUNT(DISTINCT xmin::text) AS n FROM job WHERE kind = 'verifier.check'");
    expect(Number(tx[0].n)).toBeLessThan(scheduled);
  } finally {
    await client.end();
  }
});
