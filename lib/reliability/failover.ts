/**
 * The failover harness (issue 35, part 1; docs/RELIABILITY.md §12): a primary and a synchronous
 * streaming standby of its own (pg-replica.ts), two app instances whose DATABASE_URL lists both
 * hosts with `target_session_attrs=read-write` (lib/store/db/pg-failover.ts), ingest running
 * from client loops; then the primary is SIGKILLed and the standby promoted. Nothing restarts
 * the instances: they must find the new primary by themselves. Afterwards, on the new primary:
 *   - every request acknowledged (2xx) is stored whole (with `remote_apply`; with
 *     `synchronous_commit = local` the acknowledged-but-lost are counted, not failed), and no
 *     request half-written;
 *   - every answer a 2xx or a 503 with Retry-After, never a 500 or no answer;
 *   - the time from the kill to the first acknowledged request sent after it, and the 503s meanwhile;
 *   - the chain verifies (read through the same multi-host URL).
 */
import pg from "pg";
import { splitRecord } from "@/lib/domain/stages";
import { disconnect } from "@/lib/store/db/db";
import { verifyStoredChain } from "@/lib/store/chain/verify-chain";
import { divergentRecord, prepareDatabase, startApp, verifiedRecord, type App } from "./harness";
import { startReplicatedPair, type ReplicatedPair, type SynchronousCommit } from "./pg-replica";
import { CONNECT_TIMEOUT_MS, postRecords, QUERY_TIMEOUT_MS, REQUEST_DEADLINE_MS, stageCounts } from "./faults";

export type FailoverReport = {
  synchronousCommit: SynchronousCommit;
  lagMs: number;
  sent: number;
  acknowledged: number;
  /** Acknowledged requests whose records are not on the new primary. */
  lost: number;
  statuses: Record<string, number>;
  /** 503s answered after the kill, to requests sent before the recovery. */
  refusedMeanwhile: number;
  /** From the kill to `pg_ctl promote` returning. */
  promoteMs: number;
  /** From the kill to the first acknowledged request sent after it. */
  recoverMs: number;
  longestMs: number;
  problems: string[];
};

type Sent = { operationIds: string[]; stages: number[]; status: number; started: number; ms: number; retryAfter: boolean; error?: string };

export async function runFailover(opts: { synchronousCommit: SynchronousCommit; instances?: number; clients?: number; beforeMs?: number; afterMs?: number; log?: (l: string) => void; beforeKill?: (pair: ReplicatedPair, database: string) => Promise<void>; lagMs?: number }): Promise<FailoverReport> {
  const log = opts.log ?? (() => {});
  const pair = await startReplicatedPair({ synchronousCommit: opts.synchronousCommit });
  const apps: App[] = [];
  const problems: string[] = [];
  try {
    const database = "reconcile_failover";
    const admin = new pg.Client({ connectionString: pair.primaryUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
    const multi = pair.multiHostUrl(database);
    // Migrated through the primary's own URL: the migration command (lib/cli) reads one host only.
    const { tokens } = await prepareDatabase(pair.primaryUrl.replace(/\/postgres$/, `/${database}`), "failover");
    await disconnect();
    const env = { DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS), DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS) };
    apps.push(...(await Promise.all(Array.from({ length: opts.instances ?? 2 }, () => startApp(multi, { env })))));

    const tag = `failover-${Date.now().toString(36)}`;
    const sent: Sent[] = [];
    let n = 0;
    let stop = false;
    let killedAt = 0;
    let recoveredAt = 0;
    const post = async (c: number) => {
      const i = n++;
      const records = Array.from({ length: 1 + (i % 6) }, (_, k) => (k % 3 === 0 ? divergentRecord : verifiedRecord)(`${tag}-${i}-${k}`, `${tag}-${c}`));
      const s: Sent = { operationIds: records.map((r) => r.operation_id), stages: records.map((r) => splitRecord(r).length), status: 0, started: Date.now(), ms: 0, retryAfter: false };
      await postRecords(apps[i % apps.length].base, tokens.ingest, records, s);
      s.ms = Date.now() - s.started;
      sent.push(s);
      if (killedAt && !recoveredAt && acked(s.status) && s.started >= killedAt) recoveredAt = Date.now();
      return s;
    };
    const loops = Array.from({ length: opts.clients ?? 4 }, async (_, c) => {
      while (!stop) {
        const s = await post(c);
        if (s.status === 503 || s.status === 429) await new Promise((r) => setTimeout(r, 100));
      }
    });

    await new Promise((r) => setTimeout(r, opts.beforeMs ?? 1500));
    await opts.beforeKill?.(pair, database);
    // `lagMs`: the standby stops receiving WAL that long before the kill (a lagging standby).
    // Asynchronous commits go on being acknowledged meanwhile; synchronous ones wait.
    if (opts.lagMs) {
      await pair.pauseReceiver();
      await new Promise((r) => setTimeout(r, opts.lagMs));
    }
    killedAt = Date.now();
    pair.killPrimary();
    pair.dropReceiver();
    pair.promote();
    const promoteMs = Date.now() - killedAt;
    log(`failover (${opts.synchronousCommit}): primary killed, standby promoted in ${promoteMs} ms; ${sent.length} answers so far`);
    const by = Date.now() + 30_000;
    while (!recoveredAt && Date.now() < by) await new Promise((r) => setTimeout(r, 50));
    if (!recoveredAt) problems.push("ingest did not succeed within 30 s of the kill");
    await new Promise((r) => setTimeout(r, opts.afterMs ?? 1000));
    stop = true;
    await Promise.all(loops);

    const statuses: Record<string, number> = {};
    for (const s of sent) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
    for (const s of sent) {
      if (!(acked(s.status) || (s.status === 503 && s.retryAfter))) problems.push(`a request answered ${s.status || "nothing"} after ${s.ms} ms${s.error ? `: ${s.error}` : ""}`);
      else if (s.ms > REQUEST_DEADLINE_MS) problems.push(`a request answered ${s.status} after ${s.ms} ms, past the ${REQUEST_DEADLINE_MS} ms deadline`);
    }

    // The new primary, straight.
    const client = new pg.Client({ connectionString: `postgresql://dev:dev@127.0.0.1:${pair.standbyPort}/${database}` });
    await client.connect();
    let lost = 0;
    try {
      const counts = await stageCounts(client, tag);
      for (const s of sent) {
        const per = s.operationIds.map((id) => counts.get(id) ?? 0);
        const complete = per.every((c, k) => c === s.stages[k]);
        if (!complete && per.some((c) => c > 0)) problems.push(`a request is half-written or stored twice (${s.operationIds[0]}…: ${per.join(",")})`);
        if (acked(s.status) && !complete) {
          lost++;
          if (opts.synchronousCommit === "remote_apply") problems.push(`acknowledged ${s.operationIds[0]}… is missing on the new primary`);
        }
      }
    } finally {
      await client.end();
    }
    process.env.DATABASE_URL = multi;
    const { verdict } = await verifyStoredChain();
    await disconnect();
    if (!verdict.ok) problems.push(`the chain breaks at seq ${verdict.badSeq}: ${verdict.problem}`);

    const report: FailoverReport = {
      synchronousCommit: opts.synchronousCommit,
      lagMs: opts.lagMs ?? 0,
      sent: sent.length,
      acknowledged: sent.filter((s) => acked(s.status)).length,
      lost,
      statuses,
      refusedMeanwhile: sent.filter((s) => s.status === 503 && s.started + s.ms >= killedAt && (!recoveredAt || s.started <= recoveredAt)).length,
      promoteMs,
      recoverMs: recoveredAt ? recoveredAt - killedAt : NaN,
      longestMs: Math.max(0, ...sent.map((s) => s.ms)),
      problems,
    };
    log(formatFailover(report));
    return report;
  } finally {
    try {
      await Promise.all(apps.map((a) => a.stop()));
      await disconnect();
    } finally {
      await pair.stop();
    }
  }
}

export function formatFailover(r: FailoverReport): string {
  const st = Object.entries(r.statuses).map(([s, c]) => `${s === "0" ? "none" : s}×${c}`).join(" ");
  return `failover (synchronous_commit=${r.synchronousCommit}${r.lagMs ? `, standby ${r.lagMs} ms behind` : ""}): ${r.sent} requests (${st}), ${r.acknowledged} acknowledged, ${r.lost} lost; promoted ${r.promoteMs} ms after the kill, ingest answering again ${r.recoverMs} ms after it, ${r.refusedMeanwhile} answered 503 meanwhile; longest answer ${r.longestMs} ms; problems ${r.problems.length}`;
}

const acked = (status: number) => status >= 200 && status < 300;
