import "server-only";
import { randomUUID } from "node:crypto";
import { provider } from "../db/database";
import { reader, writeTransaction } from "../db/db";
import { asSql, inList, insertManyIgnoringConflicts, placeholder, selectIn, type SqlLike } from "../db/sql";

/**
 * Durable background work (table `job`): a verifier's scheduled check, a webhook's delivery.
 * Jobs are written inside the transaction of the change that causes them (enqueueJobs), so a job
 * exists exactly when its cause committed. A worker claims due jobs under a lease: a fresh lease
 * token per claim, FOR UPDATE SKIP LOCKED on PostgreSQL (several instances claim disjoint jobs;
 * SQLite has one writer at a time). The job's result is recorded together with finishJob, which
 * succeeds only for the current lease holder, so a job whose lease ran out and was taken over
 * (a slow or crashed instance) is never recorded twice. Times are epoch milliseconds.
 */

export type JobInput = {
  kind: string;
  /** Unique across all jobs: enqueueing the same key again adds nothing (a re-sent receipt). */
  key: string;
  payload: unknown;
  dueAt: number;
};

export type Job = {
  id: string;
  kind: string;
  key: string;
  payload: unknown;
  dueAt: number;
  /** Times it has been claimed, this claim included. */
  attempts: number;
  /** This claim's lease token. */
  owner: string;
};

export type JobStatus = "pending" | "done" | "failed";

/** The job was taken over by another claim (its lease ran out) or already finished. */
export class LeaseLost extends Error {
  constructor(job: Job) {
    super(`job ${job.key} is no longer held by this worker (its lease ran out and it was taken over, or it finished)`);
    this.name = "LeaseLost";
  }
}

/** Adds jobs inside the caller's write transaction. */
export async function enqueueJobs(db: SqlLike, jobs: JobInput[]): Promise<void> {
  if (!jobs.length) return;
  const now = Date.now();
  await insertManyIgnoringConflicts(
    db,
    "job",
    ["id", "kind", "key", "payload", "status", "due_at", "attempts", "created_at"],
    jobs.map((j) => [randomUUID(), j.kind, j.key, JSON.stringify(j.payload ?? null), "pending", Math.round(j.dueAt), 0, now]),
    ["key"],
  );
}

type JobRow = { id: string; kind: string; key: string; payload: string; due_at: number | bigint | string; attempts: number | bigint };

/** Whether any job of these kinds is due (a cheap read before a claim's write transaction). */
export async function anyDue(kinds: string[], now = Date.now()): Promise<boolean> {
  if (!kinds.length) return false;
  const db = asSql(await reader());
  const rows = await db.all<{ one: number }>(
    `SELECT 1 AS one FROM job WHERE status = 'pending' AND due_at <= ${placeholder(1)} AND (lease_until IS NULL OR lease_until < ${placeholder(2)}) AND kind IN ${shifted(kinds.length, 2)} LIMIT 1`,
    [now, now, ...kinds],
  );
  return rows.length > 0;
}

/** When the next pending job of these kinds falls due (or its lease ends), or null when none is pending. */
export async function nextDueAt(kinds: string[]): Promise<number | null> {
  if (!kinds.length) return null;
  const db = asSql(await reader());
  const [row] = await db.all<{ at: number | bigint | string | null }>(
    `SELECT MIN(CASE WHEN lease_until IS NOT NULL AND lease_until > due_at THEN lease_until ELSE due_at END) AS at FROM job WHERE status = 'pending' AND kind IN ${inList(kinds.length)}`,
    kinds,
  );
  return row?.at == null ? null : Number(row.at);
}

/** Claims up to `limit` due jobs of `kind` for `leaseMs`, each under a fresh lease token. */
export async function claimJobs(kind: string, limit: number, leaseMs: number, now = Date.now()): Promise<Job[]> {
  if (limit <= 0) return [];
  const owner = randomUUID();
  const skipLocked = provider() === "postgresql" ? " FOR UPDATE SKIP LOCKED" : "";
  const p = placeholder;
  const rows = await writeTransaction((tx) =>
    asSql(tx).all<JobRow>(
      `UPDATE job SET lease_owner = ${p(1)}, lease_until = ${p(2)}, attempts = attempts + 1
       WHERE id IN (SELECT id FROM job WHERE status = 'pending' AND kind = ${p(3)} AND due_at <= ${p(4)}
                    AND (lease_until IS NULL OR lease_until < ${p(5)}) ORDER BY due_at LIMIT ${p(6)}${skipLocked})
       RETURNING id, kind, key, payload, due_at, attempts`,
      [owner, now + leaseMs, kind, now, now, limit],
    ),
  );
  return rows
    .map((r) => ({ id: r.id, kind: r.kind, key: r.key, payload: JSON.parse(r.payload) as unknown, dueAt: Number(r.due_at), attempts: Number(r.attempts), owner }))
    .sort((a, b) => a.dueAt - b.dueAt);
}

/**
 * Marks the job done (or failed for good) inside the transaction that records its result.
 * Throws LeaseLost, rolling that transaction back, when this claim no longer holds the job.
 */
export async function finishJob(db: SqlLike, job: Job, result: { status: "done" | "failed"; error?: string }): Promise<void> {
  const p = placeholder;
  const rows = await asSql(db).all<{ id: string }>(
    `UPDATE job SET status = ${p(1)}, finished_at = ${p(2)}, last_error = COALESCE(${p(3)}, last_error), lease_owner = NULL, lease_until = NULL
     WHERE id = ${p(4)} AND lease_owner = ${p(5)} AND status = 'pending' RETURNING id`,
    [result.status, Date.now(), result.error?.slice(0, 2000) ?? null, job.id, job.owner],
  );
  if (!rows.length) throw new LeaseLost(job);
}

/** Gives the job back to run again at `dueAt`, recording why. Returns false (and changes nothing) when this claim no longer holds it. */
export async function retryJob(job: Job, dueAt: number, error: string): Promise<boolean> {
  return writeTransaction((tx) => giveBackJob(tx, job, dueAt, error));
}

/** retryJob inside the caller's write transaction (a group of results: lib/store/ingest/verifier-results.ts). */
export async function giveBackJob(db: SqlLike, job: Job, dueAt: number, error: string): Promise<boolean> {
  const p = placeholder;
  const rows = await asSql(db).all<{ id: string }>(
    `UPDATE job SET due_at = ${p(1)}, last_error = ${p(2)}, lease_owner = NULL, lease_until = NULL
     WHERE id = ${p(3)} AND lease_owner = ${p(4)} AND status = 'pending' RETURNING id`,
    [Math.round(dueAt), error.slice(0, 2000), job.id, job.owner],
  );
  return rows.length > 0;
}

/**
 * Of these claimed jobs, the ones their claim still holds (pending, under the same lease token),
 * their rows locked until the caller's write transaction ends: FOR UPDATE on PostgreSQL, where
 * another instance's claim skips locked rows (SQLite has one writer at a time). finishJob and
 * giveBackJob then succeed for exactly these in that transaction, so a group of results can be
 * recorded for the jobs still held and left out for the ones taken over.
 */
export async function heldJobs(db: SqlLike, jobs: Job[]): Promise<Job[]> {
  if (!jobs.length) return [];
  const lock = provider() === "postgresql" ? " FOR UPDATE" : "";
  const rows = await selectIn<{ id: string; lease_owner: string | null }>(
    db,
    `SELECT id, lease_owner FROM job WHERE id IN %IN% AND status = 'pending' ORDER BY id${lock}`,
    jobs.map((j) => j.id),
  );
  const owners = new Map(rows.map((r) => [r.id, r.lease_owner]));
  return jobs.filter((j) => owners.get(j.id) === j.owner);
}

export type JobCounts = { kind: string; status: JobStatus; count: number }[];

/** How many jobs of each kind are in each state (health, tests, benchmarks). */
export async function jobCounts(): Promise<JobCounts> {
  const db = asSql(await reader());
  const rows = await db.all<{ kind: string; status: JobStatus; n: number | bigint | string }>("SELECT kind, status, COUNT(*) AS n FROM job GROUP BY kind, status ORDER BY kind, status");
  return rows.map((r) => ({ kind: r.kind, status: r.status, count: Number(r.n) }));
}

/** "(?, ?)" or "($3, $4)": an IN list whose placeholders start after `before` others. */
function shifted(count: number, before: number): string {
  const cells: string[] = [];
  for (let i = 1; i <= count; i++) cells.push(placeholder(before + i));
  return `(${cells.join(", ")})`;
}
