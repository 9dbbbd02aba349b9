import "server-only";
import { maybeCheckpoint } from "./checkpoints";
import { ingestRecords, type IngestResult, type ValidRecord } from "./ingest-records";

/**
 * Group commit for ingest. Writes are serialised by the chain lock anyway, so requests that
 * arrive while a transaction runs wait here and then commit together in the next one: one
 * fsync and one chain-head read for many requests instead of one each. Each request's records
 * stay whole (never split across transactions), are decided in arrival order exactly as if the
 * requests had run one after another, and get their own results back. If the group's
 * transaction fails, each request is retried alone, so one bad request fails only itself.
 */
const MAX_RECORDS_PER_TRANSACTION = 2000;

type Job = { records: ValidRecord[]; resolve: (r: IngestResult[]) => void; reject: (e: unknown) => void };

const state = globalThis as unknown as { __reconcileIngestQueue?: { jobs: Job[]; running: boolean } };
const queue = (state.__reconcileIngestQueue ??= { jobs: [], running: false });

export function submitIngest(records: ValidRecord[]): Promise<IngestResult[]> {
  if (!records.length) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    queue.jobs.push({ records, resolve, reject });
    if (!queue.running) {
      queue.running = true;
      setImmediate(drain);
    }
  });
}

/** Yields to the event loop's I/O phase, so requests already received can join the group. */
const ioTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function drain() {
  try {
    while (queue.jobs.length) {
      const group: Job[] = [];
      let size = 0;
      while (queue.jobs.length && (group.length === 0 || size + queue.jobs[0].records.length <= MAX_RECORDS_PER_TRANSACTION)) {
        const job = queue.jobs.shift()!;
        group.push(job);
        size += job.records.length;
      }
      // Renumber so that indexes are unique in the combined batch, then hand each job its own.
      const offsets: number[] = [];
      const combined: ValidRecord[] = [];
      for (const job of group) {
        offsets.push(combined.length);
        for (const r of job.records) combined.push({ ...r, index: combined.length });
      }
      try {
        const results = await ingestRecords(combined);
        // One pass over the results (never one per job: a group can hold 2,000 jobs).
        const perJob: IngestResult[][] = group.map(() => []);
        let j = 0;
        for (const r of [...results].sort((a, b) => a.index - b.index)) {
          while (j + 1 < group.length && r.index >= offsets[j + 1]) j++;
          perJob[j].push({ ...r, index: group[j].records[r.index - offsets[j]].index });
        }
        group.forEach((job, k) => job.resolve(perJob[k]));
      } catch (e) {
        // One request's failure must not fail the others it was grouped with: run each alone.
        if (group.length === 1) group[0].reject(e);
        else for (const job of group) await ingestRecords(job.records).then(job.resolve, job.reject);
      }
      void maybeCheckpoint();
      await ioTurn();
    }
  } finally {
    queue.running = false;
  }
}
