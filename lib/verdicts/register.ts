import "server-only";
import { registerJobHandler } from "@/lib/jobs/worker";
import { VERDICT_JOB_KIND } from "@/lib/store/work/verdict-outbox";
import { envSetting } from "@/lib/domain/settings";
import { exportVerdicts } from "./export";

/** Registers the verdict export with the job worker (lib/cli/job-handlers.ts). RECONCILE_VERDICT_CONCURRENCY: parallel requests (default 4). */
export function registerVerdictJobs(): void {
  const concurrency = envSetting("RECONCILE_VERDICT_CONCURRENCY");
  registerJobHandler(VERDICT_JOB_KIND, (job) => exportVerdicts(job), { concurrency });
}
