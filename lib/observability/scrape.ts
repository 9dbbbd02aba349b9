import "server-only";
import { readVitals, type Vitals } from "@/lib/store/queries/vitals";
import { queueDepth } from "@/lib/store/ingest/queue";
import { metrics } from "./metrics";

/** The Prometheus text format's content type (version 0.0.4), as prom-client writes it. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Sets the gauges read at scrape time (the database's, the queue's) from these figures. */
export function setVitals(v: Vitals, now = Date.now()): void {
  const m = metrics();
  m.ingestQueue.set(queueDepth());
  m.chainHead.reset();
  for (const c of v.chains) m.chainHead.set({ chain: String(c.chain) }, c.seq);
  m.checkpointAge.reset();
  if (v.checkpoint) m.checkpointAge.set(Math.max(0, (now - Date.parse(v.checkpoint.time)) / 1000));
  // A kind with nothing due reads 0 rather than vanishing, once it has been seen.
  for (const g of [m.jobsDue, m.jobLag]) for (const kind of seenKinds) g.set({ kind }, 0);
  for (const j of v.jobsDue) {
    seenKinds.add(j.kind);
    m.jobsDue.set({ kind: j.kind }, j.due);
    m.jobLag.set({ kind: j.kind }, Math.max(0, (now - j.oldestDueAt) / 1000));
  }
  m.databaseBytes.reset();
  if (v.databaseBytes !== null) m.databaseBytes.set(v.databaseBytes);
}

const seenKinds = new Set<string>();

/** One scrape: the database's figures read now, then every metric in the text format. */
export async function scrape(): Promise<string> {
  const now = Date.now();
  setVitals(await readVitals(now), now);
  return metrics().registry.metrics();
}
