import "server-only";

/**
 * Every kind of background job this server runs, registered with the worker (worker.ts) when the
 * production server starts: one line per feature that schedules jobs.
 */
export async function registerJobHandlers(): Promise<void> {
  // Features register here, e.g. `(await import("@/lib/verifiers/run")).registerVerifierJobs();`
  (await import("@/lib/verifiers/run")).registerVerifierJobs();
  (await import("@/lib/webhooks/register")).registerWebhookJobs();
  (await import("@/lib/approvals/jobs")).registerApprovalJobs();
  (await import("@/lib/verdicts/register")).registerVerdictJobs();
  (await import("@/lib/retention/jobs")).registerRetentionJobs();
  (await import("./project-jobs")).registerProjectJobs();
}
