import "server-only";
import { registerJobHandler } from "@/lib/jobs/worker";
import { finishJob, type Job } from "@/lib/store/work/jobs";
import { writeTransaction } from "@/lib/store/db/db";
import { PROJECT_PREPARE_JOB } from "@/lib/store/people/projects";
import { prepareProject } from "./projects";

/**
 * A project created over the API (POST /api/v1/projects) is prepared by this job, on the
 * instance's (default project's) worker, in the server's own process: it makes and migrates the
 * project's database (lib/cli/projects.ts), then marks the project ready. Preparing twice is
 * harmless (migrations already applied are skipped), so a crash anywhere just runs it again.
 */
async function runPrepare(job: Job): Promise<void> {
  const { id } = job.payload as { id: string };
  await prepareProject(id);
  await writeTransaction((tx) => finishJob(tx, job, { status: "done" }));
}

export function registerProjectJobs(): void {
  registerJobHandler(PROJECT_PREPARE_JOB, runPrepare, { concurrency: 1 });
}
