import "server-only";
import { registerJobHandler } from "@/lib/jobs/worker";
import { VERDICT_JOB_KIND } from "@/lib/store/work/verdict-outbox";
import { exportVerdicts } from "./export";

/** Registers the verdict export with the job worker (lib/cli/job-handlers.ts). RECONCILE_VERDICT_CONCURRENCY: parallel requests (default 4). */
export function registerVerdictJobs(): void {
  const concurrency = Math.max(1, Math.min(64, Number(process.env.RECONCILE_VERDICT_CONCURRENCY) || 4));
  registerJobHandler(VERDICT_JOB_KIND, (job) => exportVerdicts(job), { concurrency });
}
