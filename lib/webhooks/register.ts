import "server-only";
import { registerJobHandler } from "@/lib/jobs/worker";
import { WEBHOOK_JOB_KIND } from "@/lib/store/webhook-outbox";
import { deliverWebhook } from "./deliver";

/** Registers webhook delivery with the job worker (lib/jobs/handlers.ts). RECONCILE_WEBHOOK_CONCURRENCY: parallel sends (default 32). */
export function registerWebhookJobs(): void {
  const concurrency = Number(process.env.RECONCILE_WEBHOOK_CONCURRENCY) || 32;
  registerJobHandler(WEBHOOK_JOB_KIND, (job) => deliverWebhook(job), { concurrency });
}
