import "server-only";
import { DEFAULT_PROJECT } from "@/lib/domain/projects";
import { inInstance, inProject } from "@/lib/store/db/project-context";
import { recordChainCount } from "@/lib/store/chain/chain";
import { listProjects } from "@/lib/store/people/projects";
import { maybeInstanceCheckpoint } from "@/lib/store/chain/instance-checkpoints";

/**
 * What the server runs for each project (each in that project's database, lib/store/db/
 * project-context.ts): its chain count recorded, its retention scheduled and its job worker,
 * which delivers its webhooks, runs its verifiers, exports its verdicts and seals its archive.
 * A project created while the server runs (by this instance or another) is found within
 * WATCH_MS and started too.
 */
type Runtime = { stop: () => Promise<void> };

const WATCH_MS = 2_000;

export function runProjects(opts: { jobs: boolean; leaseMs: number; log: (line: string) => void }): { stop: () => Promise<void> } {
  const running = new Map<string, Runtime>();
  let stopped = false;

  const start = (project: { id: string; slug: string }) =>
    inProject(project, async (): Promise<Runtime> => {
      await recordChainCount();
      if (!opts.jobs) return { stop: async () => {} };
      await (await import("@/lib/retention/jobs")).scheduleRetention();
      const worker = (await import("@/lib/jobs/worker")).startJobWorker({ leaseMs: opts.leaseMs });
      return worker;
    });

  const look = async () => {
    // The instance's own trail signs its checkpoints on the same cadence as a project's chain.
    void maybeInstanceCheckpoint();
    try {
      for (const p of await inInstance(() => listProjects())) {
        if (stopped || !p.ready || running.has(p.id)) continue;
        running.set(p.id, { stop: async () => {} });
        try {
          running.set(p.id, await start(p));
          if (p.id !== DEFAULT_PROJECT) opts.log(`project ${p.slug}: started`);
        } catch (e) {
          running.delete(p.id); // tried again at the next look
          opts.log(`project ${p.slug} could not start: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
    } catch (e) {
      opts.log(`projects: ${e instanceof Error ? e.message : String(e)}`);
    }
  };

  let timer: NodeJS.Timeout | null = null;
  const first = look().then(() => {
    if (!stopped) timer = setInterval(() => void look(), WATCH_MS);
    timer?.unref();
  });

  return {
    stop: async () => {
      stopped = true;
      if (timer) clearInterval(timer);
      await first;
      await Promise.allSettled([...running.values()].map((r) => r.stop()));
    },
  };
}

/** Starts the default project's runtime first and waits for it (the server answers only then). */
export async function defaultProjectReady(): Promise<number> {
  return inProject(DEFAULT_PROJECT, () => recordChainCount());
}
