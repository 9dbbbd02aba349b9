import "server-only";
import { perProject } from "@/lib/store/db/project-context";
import { envSetting } from "@/lib/domain/settings";
import { sqlWriteTransaction } from "@/lib/store/db/db";
import { recordCheckResults, type CheckRecorded, type CheckResult } from "@/lib/store/ingest/verifier-results";

/**
 * Verifier checks' results are committed in groups, as the webhook sender's are: every check that
 * ended while the last commit ran (or within GROUP_WAIT_MS of the first of them) is recorded in
 * the next write transaction, up to RECONCILE_VERIFIER_GROUP of them (lib/store/ingest/
 * verifier-results.ts: the reads, their projection and outbox rows, the jobs' ends). Each commit
 * is a disk sync and, on SQLite, holds the one write lock ingest needs too: one transaction per
 * check capped checks at ~144/s (docs/BENCHMARKS.md, `bench:verifiers`).
 *
 * A check's handler resolves once its result has committed, so its job keeps its lease (and its
 * worker slot) until then; a crash before the commit leaves the whole group to be performed again
 * (at-least-once; recorded once). A group whose transaction fails is tried again one result a
 * transaction, so one result that cannot be written fails alone. RECONCILE_VERIFIER_GROUP=1 commits
 * each result in its own transaction at once, as before groups (bench:verifiers compares the two).
 */

type Waiting = { result: CheckResult; settle: (outcome: CheckRecorded | Error) => void };

/** How long the first result of a group waits for the checks running meanwhile to end with it. */
const GROUP_WAIT_MS = 5;

/** A project's results wait for its own transaction (project-context.ts): a group is one database's. */
const batch = perProject("verifier-results", () => ({ waiting: [] as Waiting[], flushing: false, timer: null as NodeJS.Timeout | null }));

const commitOne = (result: CheckResult) => sqlWriteTransaction(async (tx) => (await recordCheckResults(tx, [result]))[0]);

async function commitGroup(group: Waiting[]): Promise<void> {
  try {
    const outcomes = await sqlWriteTransaction((tx) => recordCheckResults(tx, group.map((w) => w.result)));
    group.forEach((w, i) => w.settle(outcomes[i]));
    return;
  } catch (e) {
    if (group.length === 1) return group[0].settle(e instanceof Error ? e : new Error(String(e)));
  }
  for (const w of group) {
    try {
      w.settle(await commitOne(w.result));
    } catch (e) {
      w.settle(e instanceof Error ? e : new Error(String(e)));
    }
  }
}

async function flush(): Promise<void> {
  const b = batch();
  if (b.flushing) return;
  b.flushing = true;
  try {
    while (b.waiting.length) await commitGroup(b.waiting.splice(0, envSetting("RECONCILE_VERIFIER_GROUP")));
  } finally {
    b.flushing = false;
  }
}

/**
 * Records a check's result with the next group; resolves once it has committed ("taken over":
 * another claim holds the job now, and this result was left out), rejects when it could not be.
 */
export function commitCheckResult(result: CheckResult): Promise<CheckRecorded> {
  if (envSetting("RECONCILE_VERIFIER_GROUP") <= 1) return commitOne(result);
  const b = batch();
  return new Promise((resolve, reject) => {
    b.waiting.push({ result, settle: (o) => (o instanceof Error ? reject(o) : resolve(o)) });
    b.timer ??= setTimeout(() => {
      b.timer = null;
      void flush();
    }, GROUP_WAIT_MS);
  });
}
