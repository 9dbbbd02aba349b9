/**
 * `npm run bench:refusals`: sign-in latency under a flood of a viewer's refusals (issue 47), in
 * one run on a fresh database (SQLite by default; `--database-url postgresql://…/<fresh db>`).
 * Three phases of `--signins` sequential password sign-ins (default 40) through the real use case:
 * quiet; under a flood of instance-permission refusals (`--concurrency` at a time, default 20)
 * each chained as before issue 47 (one `authorization.refused` record per refusal, under the
 * instance trail's lock, which sign-in takes too); and under the same flood folded as now
 * (lib/store/chain/refusals.ts). Prints each phase's sign-in p50/p95, the refusals sent and the
 * trail records they added. Asserts nothing (docs/BENCHMARKS.md).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { signins: { type: "string", default: "40" }, concurrency: { type: "string", default: "20" }, "database-url": { type: "string" }, phases: { type: "string", default: "none,chained,folded" } },
});
const SIGNINS = Number(values.signins);
const CONCURRENCY = Number(values.concurrency);
const tmp = mkdtempSync(path.join(os.tmpdir(), "bench-refusals-"));
const url = values["database-url"] ?? `file:${path.join(tmp, "bench.db")}`;
process.env.DATABASE_URL = url;
process.env.CHECKPOINT_KEY_FILE = path.join(tmp, "key.pem");
process.env.AUTH_SECRET ??= "bench-refusals-secret-0123456789abcdef";

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function main() {
  const { deployMigrations } = await import("../cli/schema-engine");
  await deployMigrations(url);
  const { createUser } = await import("../store/people/users");
  const { signInWithPassword } = await import("../store/people/sign-in");
  const { recordRefusal } = await import("../store/chain/refusals");
  const { recordSecurityEvent } = await import("../store/chain/security-events");
  const { inInstance } = await import("../store/db/project-context");
  const { instanceWriteTransaction, instanceReader, disconnect } = await import("../store/db/db");
  const password = "bench-password-123";
  await inInstance(() => createUser({ email: "signer@bench.test", password, role: "viewer", actor: "bench", via: "cli" }));
  await inInstance(() => createUser({ email: "viewer@bench.test", password, role: "viewer", actor: "bench", via: "cli" }));
  const refusal = { permission: "instance:audit", method: "GET", path: "/api/v1/security-events", source: "127.0.0.1" };
  const all = {
    none: null,
    chained: () => inInstance(() => instanceWriteTransaction((tx) => recordSecurityEvent(tx, "viewer@bench.test", { type: "authorization.refused", ...refusal }))),
    folded: () => inInstance(() => recordRefusal("viewer@bench.test", refusal)),
  };
  // `--phases`: which, in this order (none: quiet; chained: each refusal chained, as before issue 47; folded: as now).
  const floods = Object.fromEntries(values.phases.split(",").map((p) => [p, all[p as keyof typeof all]]));
  const trail = async () => (await instanceReader()).instanceEvent.count();
  const rows: Record<string, unknown>[] = [];
  for (const [name, flood] of Object.entries(floods)) {
    let running = true;
    let sent = 0;
    const before = await trail();
    const workers = flood
      ? Array.from({ length: CONCURRENCY }, async () => {
          while (running) {
            await flood();
            sent++;
            // As requests arriving over HTTP would: on SQLite a write resolves without leaving the
            // microtask queue, so a loop that never yields would starve timers and argon2's callbacks.
            await new Promise((resolve) => setImmediate(resolve));
          }
        })
      : [];
    const times: number[] = [];
    for (let i = 0; i < SIGNINS; i++) {
      const t = performance.now();
      const r = await signInWithPassword("signer@bench.test", password, "10.0.0.1");
      times.push(performance.now() - t);
      if (!r.ok) throw new Error(`sign-in failed: ${JSON.stringify(r)}`);
    }
    running = false;
    await Promise.all(workers);
    rows.push({ flood: name, signinP50ms: +pct(times, 50).toFixed(1), signinP95ms: +pct(times, 95).toFixed(1), refusalsSent: sent, trailRecordsAdded: (await trail()) - before - SIGNINS });
  }
  console.table(rows);
  console.log(JSON.stringify({ database: url.startsWith("file:") ? "sqlite" : "postgresql", signins: SIGNINS, concurrency: CONCURRENCY, phases: rows }));
  await disconnect();
}

main()
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(() => {
    if (!values["database-url"]) rmSync(tmp, { recursive: true, force: true });
  });
