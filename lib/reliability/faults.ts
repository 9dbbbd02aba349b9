/**
 * The network-fault harness (issue 35, parts 2 and 4; docs/RELIABILITY.md): app instances on
 * PostgreSQL through a FaultProxy, ingest running from a client loop, and one fault injected at
 * a time — the network cut, black-holed, or every answer delayed (a database that stalls) — then
 * healed. Afterwards, straight on the database:
 *   - every request the server acknowledged (2xx) is stored whole, and no request half-written;
 *   - every answer was a 2xx, a 503 with Retry-After or a 429 with Retry-After: never a 500, a
 *     network error, or an answer later than the request deadline (the longest is measured);
 *   - ingest succeeds again after heal without a restart (the time to the first success is measured);
 *   - the webhook outbox resumes: every stored divergent operation's message is delivered, one
 *     delivery each, one success recorded each;
 *   - the chain verifies.
 */
import { readFileSync } from "node:fs";
import pg from "pg";
import { splitRecord } from "@/lib/domain/stages";
import { newSecret, sealSecret, secretHint } from "@/lib/domain/webhooks/signing";
import { disconnect } from "@/lib/store/db/db";
import { verifyStoredChain } from "@/lib/store/chain/verify-chain";
import { startReceiver, type Receiver } from "@/lib/webhooks/testing/receiver";
import { FaultProxy } from "./fault-proxy";
import type { Cluster } from "./pg-cluster";
import { AUTH_SECRET, divergentRecord, prepareDatabase, startApp, verifiedRecord, type App, type Tokens } from "./harness";

/** The proxy's faults. */
export const FAULTS = ["cut", "blackhole", "delay", "stall"] as const;
/** And the database itself paused with SIGSTOP (a throwaway cluster's: pg-cluster.ts). */
export type Fault = (typeof FAULTS)[number] | "sigstop";

/** The app's deadlines in these runs (short, so that a run is short): DATABASE_QUERY_TIMEOUT_MS and DATABASE_CONNECT_TIMEOUT_MS. */
export const QUERY_TIMEOUT_MS = 3000;
export const CONNECT_TIMEOUT_MS = 2000;
/**
 * The request deadline these settings promise: authentication's query (one query deadline),
 * then at most one deadline waiting in the ingest queue and one for the request's own
 * transaction, each after getting a connection, plus a second of slack for a loaded machine.
 */
export const REQUEST_DEADLINE_MS = 3 * QUERY_TIMEOUT_MS + 2 * CONNECT_TIMEOUT_MS + 1000;
/** `stall`: records waiting for a transaction past which ingest answers 429. */
export const STALL_QUEUE_MAX = 100;

export type Rig = {
  url: string;
  proxy: FaultProxy;
  apps: App[];
  tokens: Tokens;
  receiver: Receiver;
  /** The throwaway cluster `url` is on, when it is one (the `sigstop` fault pauses it). */
  cluster?: Cluster;
  close: () => Promise<void>;
};

/** Migrates `url` (an empty database), and starts `instances` servers on it through a proxy, with a webhook to a local receiver. */
export async function startRig(url: string, instances = 2, cluster?: Cluster): Promise<Rig> {
  const { tokens } = await prepareDatabase(url, "faults");
  const receiver = await startReceiver();
  const secret = newSecret();
  receiver.secrets.set("/faults", secret);
  process.env.DATABASE_URL = url;
  const { createEndpoint } = await import("@/lib/store/settings/webhooks");
  await createEndpoint(
    { url: receiver.url("/faults"), description: "", format: "standard", enabled: true, filters: { event_types: ["operation.needs_review"], tools: [], outcomes: [], agents: [] } },
    { sealed: sealSecret(secret, AUTH_SECRET), hint: secretHint(secret) },
    "faults",
  );
  await disconnect();
  const proxy = await FaultProxy.start(url);
  const env = {
    DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
    DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
    RECONCILE_INGEST_QUEUE_MAX: String(STALL_QUEUE_MAX),
    RECONCILE_JOB_LEASE_MS: "4000",
    RECONCILE_WEBHOOK_ALLOW_HTTP: "1",
    RECONCILE_WEBHOOK_ALLOW_PRIVATE: "1",
    RECONCILE_WEBHOOK_SCHEDULE_SCALE: "0.001",
  };
  const apps = await Promise.all(Array.from({ length: instances }, () => startApp(proxy.via(url), { env })));
  return {
    url,
    proxy,
    apps,
    tokens,
    receiver,
    cluster,
    close: async () => {
      await Promise.all(apps.map((a) => a.stop()));
      await proxy.close();
      await receiver.close();
    },
  };
}

type Sent = { operationIds: string[]; stages: number[]; divergent: string[]; status: number; ms: number; retryAfter: boolean; error?: string };

/** Stage records stored per operation of a run (`tag`), read straight from the database. */
export async function stageCounts(client: pg.Client, tag: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const rows = (await client.query<{ id: string; n: string }>("SELECT operation_id AS id, count(*) AS n FROM chain_records WHERE kind = 'stage' AND operation_id LIKE $1 GROUP BY operation_id", [`${tag}-%`])).rows;
  for (const r of rows) counts.set(r.id, Number(r.n));
  return counts;
}

/**
 * One ingest request of a fault harness, its answer written into `s`: the status, whether a
 * Retry-After came with it, and an error for anything but a 2xx or a 503 (or no answer at all).
 */
export async function postRecords(base: string, token: string, records: unknown[], s: { status: number; retryAfter: boolean; error?: string }): Promise<void> {
  try {
    const res = await fetch(`${base}/api/v1/receipts`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ records }),
      signal: AbortSignal.timeout(REQUEST_DEADLINE_MS + 5000),
    });
    const text = await res.text();
    s.status = res.status;
    s.retryAfter = /^\d+$/.test(res.headers.get("retry-after") ?? "");
    if (res.status >= 500 && res.status !== 503) s.error = text.slice(0, 300);
  } catch (e) {
    s.error = e instanceof Error ? e.message : String(e);
  }
}

export type FaultReport = {
  fault: Fault;
  sent: number;
  acknowledged: number;
  /** Answers by status (0: no answer, a network error or past the deadline). */
  statuses: Record<string, number>;
  longestMs: number;
  /** From heal() to the first acknowledged request sent after it. */
  recoverMs: number;
  /** `stall`: the servers' resident memory, MiB: before, and the most seen during the fault. */
  rssMiB?: { before: number; max: number };
  /** `stall`: GET /api/v1/operations during the fault: status and time of each. */
  pages?: { status: number; ms: number }[];
  stored: number;
  messages: number;
  problems: string[];
};

/** One fault: `faultMs` of it under ingest from `clients` loops, then heal, recovery and the checks. */
export async function runFault(rig: Rig, fault: Fault, opts: { faultMs?: number; clients?: number; log?: (l: string) => void } = {}): Promise<FaultReport> {
  const faultMs = opts.faultMs ?? 4000;
  const clients = opts.clients ?? (fault === "stall" ? 16 : 4);
  const tag = `${fault}-${Date.now().toString(36)}`;
  const sent: Sent[] = [];
  const problems: string[] = [];
  let n = 0;
  let stop = false;
  let healedAt = 0;
  let recoveredAt = 0;

  const post = async (c: number) => {
    const size = fault === "stall" ? 40 : 1 + (n % 8);
    const i = n++;
    const records = Array.from({ length: size }, (_, k) => (k % 3 === 0 ? divergentRecord : verifiedRecord)(`${tag}-${i}-${k}`, `${tag}-${c}`));
    const s: Sent = { operationIds: records.map((r) => r.operation_id), stages: records.map((r) => splitRecord(r).length), divergent: records.filter((_, k) => k % 3 === 0).map((r) => r.operation_id), status: 0, ms: 0, retryAfter: false };
    const app = rig.apps[i % rig.apps.length];
    const started = Date.now();
    await postRecords(app.base, rig.tokens.ingest, records, s);
    s.ms = Date.now() - started;
    sent.push(s);
    if (healedAt && !recoveredAt && acked(s.status) && started >= healedAt) recoveredAt = Date.now();
    return s;
  };
  const loops = Array.from({ length: clients }, async (_, c) => {
    while (!stop) {
      const s = await post(c);
      // A refused request waits as told (shortened: the run is short), as a client would.
      if (s.status === 429 || s.status === 503) await new Promise((r) => setTimeout(r, 200));
    }
  });

  await new Promise((r) => setTimeout(r, 1000));
  const rss = { before: rig.apps.reduce((a, app) => a + rssMiB(app), 0), max: 0 };
  const pages: { status: number; ms: number }[] = [];
  if (fault === "sigstop") {
    if (!rig.cluster) throw new Error("the sigstop fault needs a rig on a cluster of its own (pg-cluster.ts)");
    rig.cluster.pause();
  } else if (fault === "cut") await rig.proxy.cut();
  else if (fault === "blackhole") rig.proxy.blackhole();
  else rig.proxy.delay(fault === "delay" ? 300 : 1500);
  const faultEnds = Date.now() + faultMs;
  const sampler = (async () => {
    while (Date.now() < faultEnds) {
      rss.max = Math.max(rss.max, rig.apps.reduce((a, app) => a + rssMiB(app), 0));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const reader = fault === "stall" ? readPages(rig, faultEnds, pages) : Promise.resolve();
  await Promise.all([sampler, reader]);
  if (fault === "sigstop") rig.cluster!.resume();
  else await rig.proxy.heal();
  healedAt = Date.now();
  opts.log?.(`${fault}: healed after ${faultMs} ms; ${sent.length} answers so far`);
  const recoverBy = Date.now() + 30_000;
  while (!recoveredAt && Date.now() < recoverBy) await new Promise((r) => setTimeout(r, 50));
  if (!recoveredAt) problems.push(`${fault}: ingest did not succeed within 30 s of heal`);
  await new Promise((r) => setTimeout(r, 500));
  stop = true;
  await Promise.all(loops);

  // The answers.
  const statuses: Record<string, number> = {};
  for (const s of sent) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
  for (const s of sent) {
    const ok = acked(s.status) || ((s.status === 503 || s.status === 429) && s.retryAfter);
    if (!ok) problems.push(`${fault}: a request answered ${s.status || "nothing"} after ${s.ms} ms${s.error ? `: ${s.error}` : ""}`);
    else if (s.ms > REQUEST_DEADLINE_MS) problems.push(`${fault}: a request answered ${s.status} after ${s.ms} ms, past the ${REQUEST_DEADLINE_MS} ms deadline`);
  }
  if (fault !== "delay" && !sent.some((s) => s.status === 503 || s.status === 429)) problems.push(`${fault}: no request was refused: the fault landed nowhere`);
  if (fault === "stall" && !sent.some((s) => s.status === 429)) problems.push("stall: no request was answered 429");
  for (const p of pages) if (p.status !== 200 && p.status !== 503) problems.push(`stall: GET /api/v1/operations answered ${p.status}`);
  for (const p of pages) if (p.ms > REQUEST_DEADLINE_MS) problems.push(`stall: GET /api/v1/operations answered after ${p.ms} ms`);

  // The database, straight.
  const client = new pg.Client({ connectionString: rig.url });
  await client.connect();
  let stored = 0;
  let messages = 0;
  try {
    const counts = await stageCounts(client, tag);
    for (const s of sent) {
      const per = s.operationIds.map((id) => counts.get(id) ?? 0);
      const complete = per.every((c, k) => c === s.stages[k]);
      if (!complete && per.some((c) => c > 0)) problems.push(`${fault}: a request is half-written or stored twice (${s.operationIds[0]}…: ${per.join(",")})`);
      if (acked(s.status) && !complete) problems.push(`${fault}: acknowledged ${s.operationIds[0]}… is missing`);
      if (complete) stored += s.operationIds.length;
    }
    // The outbox: every stored divergent operation announced, each message delivered once.
    const divergentStored = sent.flatMap((s) => s.divergent).filter((id) => counts.has(id));
    const delivered = async () =>
      (await client.query<{ n: string }>("SELECT count(*) AS n FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id WHERE m.operation_id LIKE $1 AND d.status = 'delivered'", [`${tag}-%`])).rows[0].n;
    const by = Date.now() + 30_000;
    while (Number(await delivered()) < divergentStored.length && Date.now() < by) await new Promise((r) => setTimeout(r, 100));
    const rows = (
      await client.query<{ op: string; deliveries: string; delivered: string; successes: string }>(
        `SELECT m.operation_id AS op, count(DISTINCT d.id) AS deliveries, count(DISTINCT d.id) FILTER (WHERE d.status = 'delivered') AS delivered,
                count(a.id) FILTER (WHERE a.status_code BETWEEN 200 AND 299) AS successes
           FROM webhook_messages m JOIN webhook_deliveries d ON d.message_id = m.id LEFT JOIN webhook_attempts a ON a.delivery_id = d.id
          WHERE m.operation_id LIKE $1 GROUP BY m.operation_id`,
        [`${tag}-%`],
      )
    ).rows;
    messages = rows.length;
    const byOp = new Map(rows.map((r) => [r.op, r]));
    for (const id of divergentStored) {
      const r = byOp.get(id);
      if (!r) problems.push(`${fault}: no webhook message for the stored divergent operation ${id}`);
      else if (Number(r.deliveries) !== 1 || Number(r.delivered) !== 1 || Number(r.successes) !== 1) problems.push(`${fault}: ${id}'s message: ${r.deliveries} deliveries, ${r.delivered} delivered, ${r.successes} successes recorded`);
    }
    if (rows.length !== divergentStored.length) problems.push(`${fault}: ${rows.length} messages for ${divergentStored.length} stored divergent operations`);
  } finally {
    await client.end();
  }
  process.env.DATABASE_URL = rig.url;
  const { verdict } = await verifyStoredChain();
  await disconnect();
  if (!verdict.ok) problems.push(`${fault}: the chain breaks at seq ${verdict.badSeq}: ${verdict.problem}`);

  const report: FaultReport = {
    fault,
    sent: sent.length,
    acknowledged: sent.filter((s) => acked(s.status)).length,
    statuses,
    longestMs: Math.max(0, ...sent.map((s) => s.ms)),
    recoverMs: recoveredAt ? recoveredAt - healedAt : NaN,
    ...(fault === "stall" ? { rssMiB: rss, pages } : {}),
    stored,
    messages,
    problems,
  };
  opts.log?.(formatFault(report));
  return report;
}

/** GET /api/v1/operations, one after another, until `until`. */
async function readPages(rig: Rig, until: number, out: { status: number; ms: number }[]) {
  while (Date.now() < until) {
    const started = Date.now();
    let status = 0;
    try {
      const res = await fetch(`${rig.apps[0].base}/api/v1/operations?limit=20`, { headers: { authorization: `Bearer ${rig.tokens.read}` }, signal: AbortSignal.timeout(REQUEST_DEADLINE_MS + 5000) });
      await res.text();
      status = res.status;
    } catch {
      status = 0;
    }
    out.push({ status, ms: Date.now() - started });
  }
}

function rssMiB(app: App): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${app.child.pid}/status`, "utf8"));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

export function formatFault(r: FaultReport): string {
  const st = Object.entries(r.statuses).map(([s, c]) => `${s === "0" ? "none" : s}×${c}`).join(" ");
  const extra = r.rssMiB ? `; RSS ${r.rssMiB.before} → max ${r.rssMiB.max} MiB; pages ${r.pages!.map((p) => `${p.status}/${p.ms}ms`).join(" ")}` : "";
  return `${r.fault}: ${r.sent} requests (${st}), ${r.acknowledged} acknowledged, longest answer ${r.longestMs} ms, recovered ${r.recoverMs} ms after heal; ${r.stored} operations stored, ${r.messages} webhook messages delivered once${extra}; problems ${r.problems.length}`;
}

const acked = (status: number) => status >= 200 && status < 300;
