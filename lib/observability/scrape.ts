import "server-only";
import { readVitals, type Vitals } from "@/lib/store/queries/vitals";
import { queueDepth } from "@/lib/store/ingest/queue";
import { listProjects } from "@/lib/store/people/projects";
import { inInstance, inProject } from "@/lib/store/db/project-context";
import { metrics, startIngestSeries } from "./metrics";

/** The Prometheus text format's content type (version 0.0.4), as prom-client writes it. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** One project's figures at a scrape: its vitals, or null when its database could not be read. */
export type ProjectVitals = { project: string; vitals: Vitals | null };

/** Sets the gauges read at scrape time (each project's database's, the queue's) from these figures. */
export function setVitals(all: ProjectVitals[], now = Date.now()): void {
  const m = metrics();
  m.ingestQueue.set(queueDepth());
  for (const g of [m.chainHead, m.checkpointAge, m.databaseBytes, m.projectReadable]) g.reset();
  for (const { project, vitals: v } of all) {
    startIngestSeries(project);
    m.projectReadable.set({ project }, v ? 1 : 0);
    // A kind with nothing due reads 0 rather than vanishing, once it has been seen.
    for (const kind of seenKinds) for (const g of [m.jobsDue, m.jobLag]) g.set({ project, kind }, 0);
    if (!v) continue;
    for (const c of v.chains) m.chainHead.set({ project, chain: String(c.chain) }, c.seq);
    if (v.checkpoint) m.checkpointAge.set({ project }, Math.max(0, (now - Date.parse(v.checkpoint.time)) / 1000));
    for (const j of v.jobsDue) {
      seenKinds.add(j.kind);
      m.jobsDue.set({ project, kind: j.kind }, j.due);
      m.jobLag.set({ project, kind: j.kind }, Math.max(0, (now - j.oldestDueAt) / 1000));
    }
    if (v.databaseBytes !== null) m.databaseBytes.set({ project }, v.databaseBytes);
  }
}

const seenKinds = new Set<string>();

/** How many projects' databases a scrape reads at once. */
const AT_ONCE = 8;

/**
 * Every ready project's figures, each read in its own database, AT_ONCE at a time (a scrape's
 * cost grows with the number of projects, not with their data: bench:metrics). A project whose
 * database cannot be read is reported so (`reconcile_project_readable` 0), not the whole scrape.
 */
export async function readAllVitals(now = Date.now()): Promise<ProjectVitals[]> {
  const projects = (await inInstance(() => listProjects())).filter((p) => p.ready);
  const out: ProjectVitals[] = new Array(projects.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < projects.length; i = next++) {
      const p = projects[i];
      try {
        out[i] = { project: p.slug, vitals: await inProject(p, () => readVitals(now)) };
      } catch {
        out[i] = { project: p.slug, vitals: null };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, projects.length) }, worker));
  return out;
}

/** One scrape: the databases' figures read now, then every metric in the text format. */
export async function scrape(): Promise<string> {
  const now = Date.now();
  setVitals(await readAllVitals(now), now);
  return metrics().registry.metrics();
}
