/**
 * A process running the real job worker (lib/jobs/worker.ts) on DATABASE_URL with one probe job
 * kind, for lib/reliability/jobs-crash.ts: each probe job sleeps a little (so SIGKILLs land
 * mid-job), then records one result row (`rate_limits`, key `result:<job key>:<random>`) and
 * finishes the job in the same transaction. A job recorded twice shows as two result rows.
 * Run with: node --import tsx --conditions=react-server lib/jobs/testing/worker-process.ts
 */
import { randomUUID } from "node:crypto";
import { registerJobHandler, startJobWorker } from "@/lib/jobs/worker";
import { writeTransaction } from "@/lib/store/db/db";
import { finishJob } from "@/lib/store/work/jobs";

const kind = process.env.PROBE_KIND ?? "probe";
const leaseMs = Number(process.env.PROBE_LEASE_MS ?? 1_000);

registerJobHandler(
  kind,
  async (job) => {
    await new Promise((r) => setTimeout(r, Math.random() * 20));
    await writeTransaction(async (tx) => {
      await tx.rateLimiterFlexible.create({ data: { key: `result:${job.key}:${randomUUID()}`, points: 1 } });
      await finishJob(tx, job, { status: "done" });
    });
  },
  { concurrency: 4 },
);
startJobWorker({ pollMs: 50, leaseMs, log: () => {} });
console.log("ready");
