import "server-only";
import { registerJobHandler } from "@/lib/jobs/worker";
import { WEBHOOK_JOB_KIND } from "@/lib/store/work/webhook-outbox";
import { deliverWebhook } from "./deliver";
import { envSetting } from "@/lib/domain/settings";

/** Registers webhook delivery with the job worker (lib/cli/job-handlers.ts). RECONCILE_WEBHOOK_CONCURRENCY: parallel sends (default 32). */
export function registerWebhookJobs(): void {
  const concurrency = envSetting("RECONCILE_WEBHOOK_CONCURRENCY");
  registerJobHandler(WEBHOOK_JOB_KIND, (job) => deliverWebhook(job), { concurrency });
}
