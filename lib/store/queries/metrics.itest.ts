import { beforeAll, describe, expect, it } from "vitest";
import { computeMetrics, isRecovered, METRIC_NAMES, metricFacts, type FactCount, type RecoveryCandidate } from "@/lib/domain/metrics";
import type { OperationState } from "@/lib/domain/operation";
import { call, db, ingest, principal, unique } from "@/lib/testing/integration";
import { oneClockRecount } from "@/lib/testing/migrations";
import { runCliSync } from "@/lib/testing/cli";

/**
 * /metrics reads metric_rollups and the metric columns writeProjection keeps. Here every figure
 * is held against a count made straight from the immutable records (each operation derived
 * again, recovery decided over all of them, samples from audit_samples), on the suite's
 * database, after ingest in awkward orders, corrections of every kind, audit samples and a
 * rebuild; and each figure's list link must list exactly the operations it counts.
 */
let ingestToken: string;
let reviewToken: string;
let readToken: string;

beforeAll(async () => {
  ingestToken = (await principal("reviewer", ["ingest", "verify", "read"])).token;
  reviewToken = (await principal("reviewer", ["review", "read"])).token;
  readToken = (await principal("viewer", ["read"])).token;
});

const store = () => import("@/lib/store/queries/metrics");

function cli(args: string[]) {
  return runCliSync(args);
}

/** Every operation of the database derived from its records, with its identity. */
async function derivedFromRecords(): Promise<{ id: string; seq: number; calledAt: string; state: OperationState }[]> {
  const { loadOperationRecords, stateOf } = await import("@/lib/store/chain/stage-records");
  const { linksOf } = await import("@/lib/store/projection/projection");
  const { linkedState } = await import("@/lib/domain/trace-link");
  const client = await db();
  const ops = await client.operation.findMany({ orderBy: { createdSeq: "asc" } });
  const out = [];
  for (let i = 0; i < ops.length; i += 400) {
    const page = ops.slice(i, i + 400);
    const records = await loadOperationRecords(client, page.map((o) => o.operationId));
    const states = new Map(page.map((o) => [o.operationId, stateOf(o.operationId, records.get(o.operationId))]));
    // An OTLP operation takes its trace's conversation and agent once another span named them.
    const links = await linksOf(client, states);
    for (const o of page) {
      const r = records.get(o.operationId);
      // When the call happened: the receipt's time, else when the operation was recorded.
      const calledAt = r?.stages.find((s) => s.stage === "receipt")?.observed_at ?? o.createdAt;
      out.push({ id: o.operationId, seq: o.createdSeq, calledAt, state: linkedState(states.get(o.operationId)!, links.get(o.operationId)) });
    }
  }
  return out;
}

type Counted = { calledAt: string; tool: string | null; agent: string | null; id: string; facts: FactCount["facts"] };

/** Metric facts of every operation, counted from the records alone. */
async function countedFromRecords(): Promise<Counted[]> {
  const all = await derivedFromRecords();
  const sampled = new Set((await (await db()).auditSample.findMany()).map((s) => s.operationId));
  const cand = (o: (typeof all)[number]): RecoveryCandidate => ({
    operation_id: o.id,
    created_seq: o.seq,
    trajectory_id: o.state.trajectory_id,
    tool: o.state.tool,
    fingerprint: o.state.fingerprint,
    effective_outcome: o.state.effective_outcome,
    recovers: o.state.recovers,
  });
  const others = all.map(cand);
  return all.map((o) => {
    const recovered = isRecovered({ ...cand(o), verdict: o.state.classification.outcome, review: metricFacts(o.state, { recovered: false, sampled: false }).review }, others);
    return { id: o.id, calledAt: o.calledAt, tool: o.state.tool, agent: o.state.agent, facts: metricFacts(o.state, { recovered, sampled: sampled.has(o.id) }) };
  });
}

const metricsOf = (list: Counted[]) => computeMetrics(list.map((c) => ({ facts: c.facts, count: 1 })));

/** How many operations the list shows for these parameters, over every page. */
async function countListed(params: Record<string, string>): Promise<number> {
  const { listOperations, listQuerySchema } = await import("@/lib/store/queries/list-operations");
  let n = 0;
  for (let cursor: string | null | undefined; ; ) {
    const page = await listOperations(listQuerySchema.parse({ ...params, limit: "200", ...(cursor ? { cursor } : {}) }));
    n += page.items.length;
    if (!page.next_cursor) return n;
    cursor = page.next_cursor;
  }
}

async function expectAgrees(counted: Counted[], query: { since?: string; until?: string; tool?: string; agent?: string }) {
  const { readMetrics, metricsQuerySchema } = await store();
  const q = metricsQuerySchema.parse(query);
  const mine = counted.filter(
    (c) => (!q.since || c.calledAt >= q.since) && (!q.until || c.calledAt < q.until) && (!q.tool || c.tool === q.tool) && (!q.agent || c.agent === q.agent),
  );
  const report = await readMetrics(q);
  const label = JSON.stringify(query);
  expect(report.operations, label).toBe(mine.length);
  expect(report.metrics, label).toEqual(metricsOf(mine));
  const tools = [...new Set(mine.map((c) => c.tool))].sort((a, b) => ((a ?? "") < (b ?? "") ? -1 : 1));
  expect(report.by_tool.map((t) => [t.tool, t.metrics]), label).toEqual(tools.map((t) => [t, metricsOf(mine.filter((c) => c.tool === t))]));
  const agents = [...new Set(mine.map((c) => c.agent))].sort((a, b) => ((a ?? "") < (b ?? "") ? -1 : 1));
  expect(report.by_agent.map((a) => [a.agent, a.metrics]), label).toEqual(agents.map((a) => [a, metricsOf(mine.filter((c) => c.agent === a))]));
  expect(report.weekly.reduce((a, w) => a + w.operations, 0), label).toBe(mine.length);
  return report;
}

const correct = async (id: string, body: Record<string, unknown>) => {
  const r = await call(`/api/v1/operations/${id}/corrections`, { token: reviewToken, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { correction: { id: string } };
};

describe("metrics from rollups", () => {
  it("equal a count made straight from the records through ingest, corrections, samples and a rebuild; every figure's list holds its operations", async () => {
    const tag = unique("met");
    const t0 = new Date(Date.now() - 120_000).toISOString();
    const t1 = new Date(Date.now() - 60_000).toISOString();
    const tool = `db.insert-${tag}`;
    const sampledTool = `files.put-${tag}`;
    const heldTool = `billing.charge-${tag}`;
    const { setAuditSampling } = await import("@/lib/store/settings/audit-sampling");
    await setAuditSampling({ tool: sampledTool, rate: 1, by: "test" });
    // The setting is a security event in the chain.
    const [event] = await (await db()).chainRecord.findMany({ where: { kind: "security" }, orderBy: { seq: "desc" }, take: 1 });
    expect(JSON.parse(event.payload)).toMatchObject({ type: "audit_sampling.changed", tool: sampledTool, rate: 1 });
    expect(event.actor).toBe("test");

    const rec = (id: string, more: Record<string, unknown>) => {
      const fingerprint = `sha256:${id.split("-")[0]}-${tag}`;
      // A match shows the intent's fingerprint: one that shows none would be uncertain (issue 54).
      const read = more.canonical_read as { status: string; evidence?: Record<string, unknown> } | undefined;
      const shown = read?.status === "match" ? { canonical_read: { ...read, evidence: { ...read.evidence, fingerprint } } } : {};
      return {
        operation_id: `${id}-${tag}`,
        agent: { name: `agent-${tag}` },
        tool: { name: tool },
        trajectory_id: `traj-${tag}`,
        intent: { effect: "insert a row", fingerprint },
        ...more,
        ...shown,
      };
    };
    const accepted = { status: "accepted", observed_at: t0 };
    const held = (inMs: number) => ({ status: "pending", expires_at: new Date(Date.now() + inMs).toISOString(), rule: "/amount > 100", rule_version: "r1" });
    const read = (status: string) => ({ status, observed_at: t1, evidence: { object_id: `o-${tag}` } });
    const batch1 = [
      rec("a-fail", { claimed_outcome: "success", receipt: accepted, canonical_read: read("absent") }), // silent failure, overclaimed
      rec("a-retry", { claimed_outcome: "success", receipt: accepted, canonical_read: read("match") }), // recovers a-fail by key
      rec("b-fail", { claimed_outcome: "success", receipt: { status: "rejected", observed_at: t0 } }), // rejected
      rec("c-ok", { receipt: accepted, canonical_read: read("match") }), // no claim
      rec("d-unknown", { claimed_outcome: "success", receipt: accepted, canonical_read: read("unavailable") }), // unknown actual
      rec("e-false", { claimed_outcome: "failed", receipt: { status: "rejected", observed_at: t0 }, canonical_read: read("match") }), // a false failure
      rec("f-late", { claimed_outcome: "success", receipt: accepted }), // uncertain now; its read comes after its retry
      rec("f-retry", { claimed_outcome: "success", receipt: accepted, canonical_read: read("match") }),
      rec("g-fail", { receipt: accepted, canonical_read: read("mismatch") }),
      rec("h-named", { trajectory_id: `other-${tag}`, tool: { name: "x.other" }, recovers: [`g-fail-${tag}`, `b-fail-${tag}`], receipt: accepted, canonical_read: read("match") }),
      rec("i-comp", { receipt: accepted, canonical_read: read("absent") }),
      rec("j-div", { receipt: accepted, canonical_read: read("absent") }),
      rec("k-ret", { claimed_outcome: "success", receipt: accepted, canonical_read: read("match") }),
      rec("s1", { tool: { name: sampledTool }, claimed_outcome: "success", receipt: accepted, canonical_read: read("match") }),
      rec("s2", { tool: { name: sampledTool }, claimed_outcome: "success", receipt: accepted, canonical_read: read("match") }),
      rec("s3", { tool: { name: sampledTool }, receipt: accepted, canonical_read: read("match") }),
      rec("noagent", { agent: undefined, tool: undefined, trajectory_id: undefined, receipt: accepted }),
      // Calls the MCP gateway held (docs/GATEWAY.md): one still waiting, one a reviewer denies, one whose time ran out.
      rec("m-held", { tool: { name: heldTool }, agent: { name: `held-${tag}` }, claimed_outcome: "success", approval: held(24 * 3600_000) }),
      rec("m-denied", { tool: { name: heldTool }, agent: { name: `held-${tag}` }, approval: held(24 * 3600_000) }),
      rec("m-expired", { tool: { name: heldTool }, agent: { name: `held-${tag}` }, approval: held(-1000) }),
    ];
    const r1 = await ingest(ingestToken, { records: batch1 });
    expect(r1.status, JSON.stringify(r1.body)).toBe(200);
    // The late failure's read arrives after its retry was recorded: it becomes recovered then.
    expect((await ingest(ingestToken, { operation_id: `f-late-${tag}`, canonical_read: read("absent") })).status).toBe(200);
    // A retry of j-div that is verified, then retracted: j-div stops being recovered.
    expect((await ingest(ingestToken, rec("j-retry", { receipt: accepted, canonical_read: read("match"), intent: { fingerprint: `sha256:j-${tag}` } }))).status).toBe(201);

    const client = await db();
    const view = async (id: string) => client.operationView.findUniqueOrThrow({ where: { operationId: `${id}-${tag}` } });
    expect((await view("a-fail")).recovered).toBe(true);
    expect((await view("f-late")).recovered).toBe(true);
    expect((await view("g-fail")).recovered).toBe(true);
    expect((await view("b-fail")).recovered).toBe(true);
    expect((await view("j-div")).recovered).toBe(true);
    expect((await view("s1")).auditSample).toBe(true);
    expect((await view("s1")).needsReview).toBe(true);
    expect((await view("c-ok")).auditSample).toBe(false);

    const denied = await call(`/api/v1/operations/m-denied-${tag}/approval`, { token: reviewToken, body: { decision: "deny", reason: "not this customer" } });
    expect(denied.status, JSON.stringify(denied.body)).toBe(201);
    expect((await call(`/api/v1/operations/m-expired-${tag}/approval`, { token: readToken })).body.status).toBe("expired");
    expect((await view("m-denied")).effectiveOutcome).toBe("rejected");
    expect((await view("m-expired")).effectiveOutcome).toBe("rejected");
    expect((await view("m-held")).effectiveOutcome).toBe("uncertain");

    await correct(`j-retry-${tag}`, { action: "retract", reason: "the row was not there after all" });
    expect((await view("j-div")).recovered).toBe(false);
    await correct(`i-comp-${tag}`, { action: "resolve", outcome: "compensated", reason: "undone by hand" });
    expect((await view("i-comp")).recovered).toBe(true);
    await correct(`a-fail-${tag}`, { action: "resolve", outcome: "not_applied", reason: "never written" });
    await correct(`g-fail-${tag}`, { action: "resolve", outcome: "verified", reason: "it is there", evidence: { object_id: "row-1" } });
    await correct(`d-unknown-${tag}`, { action: "resolve", outcome: "not_applied", reason: "checked the table" });
    await correct(`k-ret-${tag}`, { action: "retract", reason: "evidence pointed at another row" });
    // Audit samples: one confirmed, one found wrong.
    await correct(`s1-${tag}`, { action: "resolve", outcome: "verified", reason: "checked the bucket", evidence: { object_id: "file-1" } });
    await correct(`s2-${tag}`, { action: "retract", reason: "the file is empty" });
    expect((await view("s1")).needsReview).toBe(false);
    expect((await view("s3")).needsReview).toBe(true);
    // The operation read says the same as its list row.
    const opRead = async (id: string) => (await call(`/api/v1/operations/${id}-${tag}`, { token: readToken })).body;
    expect(await opRead("s3")).toMatchObject({ audit_sample: true, needs_review: true, effective_outcome: "verified" });
    expect(await opRead("s1")).toMatchObject({ audit_sample: true, needs_review: false });
    expect(await opRead("c-ok")).toMatchObject({ audit_sample: false, needs_review: false });
    expect((await opRead("h-named")).recovers).toEqual([`g-fail-${tag}`, `b-fail-${tag}`]);
    const queue = await call(`/api/v1/operations?needs_review=true&audit_sample=true&order=oldest&tool=${sampledTool}`, { token: readToken });
    expect(queue.body.items.map((i: { operation_id: string; audit_sample: boolean }) => [i.operation_id, i.audit_sample])).toEqual([
      [`s2-${tag}`, true], // retracted: divergent, needs review as any divergent operation
      [`s3-${tag}`, true],
    ]);

    const now = Date.now();
    const queries = [
      {},
      { tool },
      { agent: `agent-${tag}` },
      { since: new Date(now - 3_600_000).toISOString() },
      { since: new Date(now - 3_600_000).toISOString(), until: new Date(now + 3_600_000).toISOString() },
      { until: new Date(now - 3_600_000).toISOString() },
      { since: `${new Date(now).toISOString().slice(0, 10)}T00:00:00Z` },
      { since: "2000-01-01T00:00:00Z", until: "2000-01-01T00:00:01Z" },
    ];
    const check = async () => {
      const counted = await countedFromRecords();
      const reports = [];
      for (const q of queries) reports.push(await expectAgrees(counted, q));
      // Each figure's link lists exactly its operations.
      const ours = (await store()).metricsQuerySchema.parse({ agent: `agent-${tag}` });
      const report = await (await store()).readMetrics(ours);
      for (const m of METRIC_NAMES) {
        const f = report.metrics[m];
        const list = (part: string) => countListed({ agent: `agent-${tag}`, metric: m, part });
        expect(await list("hit"), `${m} hit`).toBe(f.hit);
        expect(await list("n"), `${m} n`).toBe(f.n);
        expect(await list("miss"), `${m} miss`).toBe(f.n - f.hit);
        expect(await list("unknown"), `${m} unknown`).toBe(f.unknown);
        expect(await list("samples"), `${m} samples`).toBe(f.from_samples);
      }
      return reports;
    };
    const before = await check();
    const ours = before[2].metrics;
    // The hand-made set, as reasoned (for this test's agent):
    // 1: claims a-fail, a-retry, b-fail, d-unknown, e-false, f-late, f-retry, k-ret, s1, s2; right: a-retry, f-retry, s1.
    expect(ours.grounding_accuracy).toMatchObject({ hit: 3, n: 10, unknown: 0, from_samples: 2 });
    // 2: accepted and not held: a-fail, d-unknown, f-late, j-div, k-ret, s2, j-retry of 15 accepted.
    expect(ours.silent_failure_rate).toMatchObject({ hit: 7, n: 15, unknown: 0 });
    // 3: divergent and resolved: a-fail (not applied), g-fail (verified), i-comp (compensated); e-false, f-late, j-div open.
    expect(ours.verification_precision).toMatchObject({ hit: 1, n: 3, unknown: 3 });
    // 4: failures reviewers know: a-fail (flagged), d-unknown, k-ret, s2 (an audit sample), j-retry (missed).
    expect(ours.verification_recall).toMatchObject({ hit: 1, n: 5, unknown: 0, from_samples: 1 });
    // 5: detected failures a, b (named), e, f (read after its retry), g (named), i (compensated), j (its retry retracted).
    expect(ours.recovery_rate).toMatchObject({ hit: 5, n: 7 });

    const r = cli(["projections:rebuild"]);
    expect(r.status, r.stderr).toBe(0);
    expect(await check()).toEqual(before);
  });
});

describe("the paper_metrics migration's backfill", () => {
  it("fills the metric columns and metric_rollups as the projection writes them (recovers edges aside, which need a rebuild)", async () => {
    const { readFileSync, readdirSync } = await import("node:fs");
    const { provider } = await import("@/lib/store/db/database");
    const client = await db();
    // Resolved verified while uncertain, then a read that matches: the verdict is verified too,
    // and only the last correction says a resolve is in effect.
    const late = unique("resolved-then-read");
    const observed = new Date(Date.now() - 60_000).toISOString();
    expect((await ingest(ingestToken, { operation_id: late, tool: { name: "db.insert" }, intent: { effect: "insert a row" }, receipt: { status: "accepted", observed_at: observed } })).status).toBe(201);
    await correct(late, { action: "resolve", outcome: "verified", reason: "seen by hand", evidence: { object_id: "row-9" } });
    expect((await ingest(ingestToken, { operation_id: late, canonical_read: { status: "match", observed_at: observed, evidence: { object_id: "row-9" } } })).status).toBe(200);
    expect(await client.operationView.findUniqueOrThrow({ where: { operationId: late } })).toMatchObject({ outcome: "verified", effectiveOutcome: "verified", review: "verified" });
    // Verified, retracted (no success was claimed), then a read that finds it absent: divergent
    // both ways, and the withdrawal still in effect.
    const retracted = unique("retracted-then-read");
    expect((await ingest(ingestToken, { operation_id: retracted, tool: { name: "db.insert" }, intent: { effect: "insert a row" }, receipt: { status: "accepted", observed_at: observed }, canonical_read: { status: "match", observed_at: observed, evidence: { object_id: "row-8" } } })).status).toBe(201);
    await correct(retracted, { action: "retract", reason: "the row is someone else's" });
    const later = new Date(Date.now() - 30_000).toISOString();
    expect((await ingest(ingestToken, { operation_id: retracted, canonical_read: { status: "absent", observed_at: later } })).status).toBe(200);
    expect(await client.operationView.findUniqueOrThrow({ where: { operationId: retracted } })).toMatchObject({ outcome: "divergent", effectiveOutcome: "divergent", review: "retracted" });

    const cols = { operationId: true, fingerprint: true, actual: true, review: true, recovered: true } as const;
    const before = await client.operationView.findMany({ select: cols, orderBy: { operationId: "asc" } });
    const rollups = async () =>
      (await client.metricRollup.findMany())
        .filter((r) => r.operations !== 0)
        .map((r) => JSON.stringify(r))
        .sort();
    const rollupsBefore = await rollups();
    expect(before.some((v) => v.fingerprint !== null && v.recovered)).toBe(true);

    // As the migration found them: the new columns at their defaults, no rollup.
    await client.$executeRawUnsafe("UPDATE operation_views SET fingerprint = NULL, actual = 'unknown', review = 'none', recovered = FALSE");
    await client.$executeRawUnsafe("DELETE FROM metric_rollups");
    const dir = `prisma/migrations/${provider()}`;
    const folder = readdirSync(dir).find((d) => d.endsWith("_paper_metrics"))!;
    const sql = readFileSync(`${dir}/${folder}/migration.sql`, "utf8");
    const backfill = sql.slice(sql.indexOf('UPDATE "operation_views" SET "fingerprint"'));
    for (const statement of backfill.split(/;\s*\n/).map((s) => s.replace(/^--.*$/gm, "").trim()).filter(Boolean)) {
      await client.$executeRawUnsafe(statement);
    }
    // Then, as an upgrade runs them, the later migration that re-counts the rollups by the day of
    // the call (the backfill above counted them by the day an operation was recorded).
    for (const statement of oneClockRecount(provider())) await client.$executeRawUnsafe(statement);

    const after = await client.operationView.findMany({ select: cols, orderBy: { operationId: "asc" } });
    const strip = (v: (typeof before)[number]) => ({ ...v, recovered: undefined });
    expect(after.map(strip)).toEqual(before.map(strip));
    // Recovery by key is backfilled; by a recovers edge only after projections:rebuild.
    const edges = new Set((await client.operationRecover.findMany()).map((e) => e.recovers));
    const lost = before.filter((v, i) => v.recovered && !after[i].recovered).map((v) => v.operationId);
    expect(lost.every((id) => edges.has(id))).toBe(true);
    expect(after.filter((v, i) => v.recovered && !before[i].recovered)).toEqual([]);
    if (!lost.length) expect(await rollups()).toEqual(rollupsBefore);

    const r = cli(["projections:rebuild"]);
    expect(r.status, r.stderr).toBe(0);
    expect(await client.operationView.findMany({ select: cols, orderBy: { operationId: "asc" } })).toEqual(before);
    expect(await rollups()).toEqual(rollupsBefore);
  });
});
