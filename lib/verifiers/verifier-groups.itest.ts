/**
 * Verifier check results committed in groups, on the suite's real database (SQLite, or
 * PostgreSQL with INTEGRATION_DATABASE_URL): one transaction records the reads of the checks
 * whose jobs are still held and ends those jobs; a check taken over by another claim records
 * nothing; a group that does not commit (a crash before the commit) leaves every check to be
 * performed again and recorded once; commitCheckResult groups concurrent results, and one result
 * that cannot be written fails alone. Each test uses a job kind the server has no handler for.
 */
import { describe, expect, it } from "vitest";
import { systemSender } from "@/lib/domain/trust";
import { verifierReadPayload } from "@/lib/domain/verifier-check";
import { ingest, principal, unique } from "@/lib/testing/integration";
import type { Job } from "@/lib/store/work/jobs";

const jobs = () => import("@/lib/store/work/jobs");
const results = () => import("@/lib/store/ingest/verifier-results");
const dbm = () => import("@/lib/store/db/db");
const sqlm = () => import("@/lib/store/db/sql");

const VERIFIER = "groups-itest";
const sender = systemSender(`verifier:${VERIFIER}@1`);

/** Operations with an accepted receipt, made through the API. */
async function operations(n: number): Promise<string[]> {
  const { token } = await principal("admin", ["ingest"]);
  const ids = Array.from({ length: n }, () => unique("op-groups"));
  const res = await ingest(token, {
    records: ids.map((id) => ({ operation_id: id, tool: { name: "groups.itest" }, intent: { params: { text: "x" } }, receipt: { status: "accepted", receipt_id: id, observed_at: new Date().toISOString() } })),
  });
  expect(res.status, res.text).toBe(200);
  return ids;
}

/** A check's read of `operationId`, as the runner builds it. */
function read(operationId: string, check = 1) {
  const canonical_read = verifierReadPayload({
    status: "match",
    observedAt: new Date().toISOString(),
    evidence: null,
    info: { name: VERIFIER, version: 1, check, of: 1, request: { method: "GET", url: "https://api.example.com/x", headers: {} }, http_status: 200, rule: 0, window_closes_at: new Date().toISOString() },
  });
  return { operationId, raw: { operation_id: operationId, canonical_read }, sender };
}

/** The verifier reads stored for these operations, by operation. */
async function readsOf(ids: string[]): Promise<Map<string, number>> {
  const { reader } = await dbm();
  const { selectIn } = await sqlm();
  const rows = await selectIn<{ operation_id: string; n: number | bigint | string }>(
    await reader(),
    "SELECT operation_id, COUNT(*) AS n FROM chain_records WHERE kind = 'stage' AND stage = 'canonical_read' AND operation_id IN %IN% GROUP BY operation_id",
    ids,
  );
  return new Map(rows.map((r) => [r.operation_id, Number(r.n)]));
}

async function jobRows(kind: string) {
  const { reader } = await dbm();
  const { asSql, placeholder } = await sqlm();
  const rows = await asSql(await reader()).all<{ key: string; status: string; lease_owner: string | null; due_at: number | bigint | string; last_error: string | null }>(
    `SELECT key, status, lease_owner, due_at, last_error FROM job WHERE kind = ${placeholder(1)} ORDER BY key`,
    [kind],
  );
  return new Map(rows.map((r) => [r.key.slice(kind.length + 1), { ...r, due_at: Number(r.due_at) }]));
}

async function enqueue(kind: string, names: string[], dueAt = Date.now()) {
  const { enqueueJobs } = await jobs();
  const { writeTransaction } = await dbm();
  await writeTransaction((tx) => enqueueJobs(tx, names.map((n) => ({ kind, key: `${kind}:${n}`, payload: null, dueAt }))));
}

const byName = (kind: string, claimed: Job[]) => new Map(claimed.map((j) => [j.key.slice(kind.length + 1), j]));

describe("verifier check results in groups", () => {
  it("one transaction records the reads and ends the jobs still held; a check taken over records nothing; a retry is given back", async () => {
    const { claimJobs } = await jobs();
    const { recordCheckResults } = await results();
    const { sqlWriteTransaction } = await dbm();
    const [a, b, c] = await operations(3);
    const kind = unique("kind");
    // c's job is claimed first with a lease that runs out, then taken over by a second claim.
    await enqueue(kind, ["c"], Date.now() - 5000);
    const [late] = await claimJobs(kind, 1, 50);
    await new Promise((r) => setTimeout(r, 80));
    const [takeover] = await claimJobs(kind, 1, 60_000);
    expect(takeover.id).toBe(late.id);
    await enqueue(kind, ["a", "b", "retry"]);
    const held = byName(kind, await claimJobs(kind, 10, 60_000));
    expect([...held.keys()].sort()).toEqual(["a", "b", "retry"]);

    const retryAt = Date.now() + 60_000;
    const outcomes = await sqlWriteTransaction((tx) =>
      recordCheckResults(tx, [
        { job: held.get("a")!, end: { status: "done" }, read: read(a) },
        { job: late, end: { status: "done" }, read: read(c) },
        { job: held.get("b")!, end: { status: "done", error: "HTTP 200: no rule matched" }, read: read(b) },
        { job: held.get("retry")!, end: { retryAt, error: "HTTP 503: unavailable" } },
      ]),
    );
    expect(outcomes).toEqual(["recorded", "taken over", "recorded", "recorded"]);
    expect(await readsOf([a, b, c])).toEqual(new Map([[a, 1], [b, 1]]));
    const rows = await jobRows(kind);
    expect(rows.get("a")).toMatchObject({ status: "done", lease_owner: null });
    expect(rows.get("b")).toMatchObject({ status: "done", last_error: "HTTP 200: no rule matched" });
    // The taken-over job is the second claim's, untouched by the first's result.
    expect(rows.get("c")).toMatchObject({ status: "pending", lease_owner: takeover.owner });
    expect(rows.get("retry")).toMatchObject({ status: "pending", lease_owner: null, due_at: retryAt, last_error: "HTTP 503: unavailable" });
    // The second claim records c's read: once.
    expect(await sqlWriteTransaction((tx) => recordCheckResults(tx, [{ job: takeover, end: { status: "done" }, read: read(c) }]))).toEqual(["recorded"]);
    expect((await readsOf([c])).get(c)).toBe(1);
  });

  it("a group that does not commit (a crash before the commit) records nothing; the checks, claimed again when their lease ends, are recorded once", async () => {
    const { claimJobs } = await jobs();
    const { recordCheckResults } = await results();
    const { sqlWriteTransaction } = await dbm();
    const ids = await operations(4);
    const kind = unique("kind");
    await enqueue(kind, ids);
    const first = byName(kind, await claimJobs(kind, 10, 300));
    const group = (claimed: Map<string, Job>) => ids.map((id) => ({ job: claimed.get(id)!, end: { status: "done" as const }, read: read(id) }));
    await expect(
      sqlWriteTransaction(async (tx) => {
        await recordCheckResults(tx, group(first));
        throw new Error("the process died before the commit");
      }),
    ).rejects.toThrow("died");
    expect(await readsOf(ids)).toEqual(new Map());
    expect([...(await jobRows(kind)).values()].every((r) => r.status === "pending" && r.lease_owner !== null)).toBe(true);
    // Not claimable while the dead claim's lease lasts; then performed again.
    expect(await claimJobs(kind, 10, 60_000)).toEqual([]);
    await new Promise((r) => setTimeout(r, 350));
    const second = byName(kind, await claimJobs(kind, 10, 60_000));
    expect(second.size).toBe(ids.length);
    expect(await sqlWriteTransaction((tx) => recordCheckResults(tx, group(second)))).toEqual(ids.map(() => "recorded"));
    // The first claim's results, arriving late, are left out.
    expect(await sqlWriteTransaction((tx) => recordCheckResults(tx, group(first)))).toEqual(ids.map(() => "taken over"));
    expect(await readsOf(ids)).toEqual(new Map(ids.map((id) => [id, 1])));
    expect([...(await jobRows(kind)).values()].every((r) => r.status === "done")).toBe(true);
  });

  it("results committed together: every concurrent result recorded, and one that cannot be written fails alone", async () => {
    const { claimJobs } = await jobs();
    const { commitCheckResult } = await import("./commit");
    const ids = await operations(20);
    const kind = unique("kind");
    await enqueue(kind, [...ids, "broken"]);
    const claimed = byName(kind, await claimJobs(kind, 50, 60_000));
    // A read whose operation id is not text: ingest cannot store it, and throws.
    const broken = { operationId: { not: "text" } as unknown as string, raw: { operation_id: { not: "text" }, canonical_read: {} }, sender };
    const settled = await Promise.allSettled([
      ...ids.map((id) => commitCheckResult({ job: claimed.get(id)!, end: { status: "done" }, read: read(id) })),
      commitCheckResult({ job: claimed.get("broken")!, end: { status: "done" }, read: broken }),
    ]);
    expect(settled.slice(0, ids.length).map((s) => (s.status === "fulfilled" ? s.value : String(s.reason)))).toEqual(ids.map(() => "recorded"));
    expect(settled[ids.length].status).toBe("rejected");
    expect(await readsOf(ids)).toEqual(new Map(ids.map((id) => [id, 1])));
    const rows = await jobRows(kind);
    expect(ids.every((id) => rows.get(id)?.status === "done")).toBe(true);
    // Nothing was written for the broken one: still pending under its claim (the worker retries it).
    expect(rows.get("broken")).toMatchObject({ status: "pending", lease_owner: claimed.get("broken")!.owner });
  });
});
