import "server-only";
import { registerJobHandler } from "@/lib/jobs/worker";
import { APPROVAL_EXPIRY_JOB, runApprovalExpiryJob } from "@/lib/store/review/approvals";

/** Registers the approval expiry with the job worker (lib/cli/job-handlers.ts). */
export function registerApprovalJobs(): void {
  registerJobHandler(APPROVAL_EXPIRY_JOB, (job) => runApprovalExpiryJob(job), { concurrency: 2 });
}
