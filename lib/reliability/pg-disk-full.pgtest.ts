/**
 * The disk fills under PostgreSQL (issue 35, part 3, its PostgreSQL half): a throwaway cluster
 * (pg-cluster.ts) whose data directory (WAL included), or its WAL alone, lives on a small tmpfs
 * this test mounts (as root, as CI runs). A filler file takes the rest of the space and four writers go on until
 * the disk has refused a dozen requests. PostgreSQL refuses a table that cannot grow with 53100
 * (answered 507 `storage_full`), but a WAL segment it cannot write is a PANIC: the database
 * restarts, or stops. So: every refusal is a 507 or a 503 with Retry-After, never a 500 or a
 * hang; reads answer 200 while the database is up (503 while it is down); once the filler is
 * removed (and the database started again if it had stopped, as its supervisor would) ingest is
 * taken again without restarting the server, every acknowledged record is stored and the
 * chain verifies.
 */
import { execFileSync } from "node:child_process";
import { chownSync, closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { disconnect } from "@/lib/store/db/db";
import { verifyStoredChain } from "@/lib/store/chain/verify-chain";
import { CONNECT_TIMEOUT_MS, QUERY_TIMEOUT_MS, REQUEST_DEADLINE_MS } from "./faults";
import { divergentRecord, prepareDatabase, siblingDatabase, startApp, type App, type Tokens } from "./harness";
import { startCluster, type Cluster } from "./pg-cluster";

type Placement = "data" | "wal";

describe.each<[string, Placement]>([
  ["the data directory", "data"],
  ["the WAL alone", "wal"],
])("a full disk under PostgreSQL: %s on a small tmpfs", (_, placement) => {
  const mount = mkdtempSync(path.join(os.tmpdir(), "reconcile-pgfull-"));
  const filler = path.join(mount, "filler");
  let mounted = false;
  let cluster: Cluster;
  let app: App;
  let tokens: Tokens;
  let url: string;

  beforeAll(async () => {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${placement === "data" ? 160 : 48}m`, "tmpfs", mount]);
    mounted = true;
    chownSync(mount, Number(execFileSync("id", ["-u", "postgres"]).toString().trim()), 0);
    // 1 MiB WAL segments, and little WAL kept: the small disk holds what PostgreSQL needs.
    cluster = await startCluster({ ...(placement === "data" ? { under: mount } : { walUnder: mount }), walSegmentMiB: 1, settings: "-c min_wal_size=4MB -c max_wal_size=32MB" });
    url = (await siblingDatabase(cluster.url, "full")).url;
    tokens = (await prepareDatabase(url, "pg-disk-full")).tokens;
    await disconnect();
    app = await startApp(url, { env: { DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS), DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS) } });
  }, 120_000);

  afterAll(async () => {
    try {
      await app?.stop();
      await disconnect();
      await cluster?.stop();
    } finally {
      // Whatever failed above, the mount goes.
      if (mounted) execFileSync("umount", ["-l", mount]);
      rmSync(mount, { recursive: true, force: true });
    }
  });

const fill = (): void => {
  const fd = openSync(filler, "a");
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
  } finally {
    closeSync(fd);
  }
};

const send = async (ids: string[]) => {
  const started = Date.now();
  try {
    const res = await fetch(`${app.base}/api/v1/receipts`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.ingest}`, "content-type": "application/json" },
      body: JSON.stringify({ records: ids.map((id) => divergentRecord(id, "pgfull")) }),
      signal: AbortSignal.timeout(REQUEST_DEADLINE_MS + 5000),
    });
    const text = await res.text();
    return { status: res.status, ms: Date.now() - started, retryAfter: res.headers.get("retry-after"), body: text ? JSON.parse(text) : null };
  } catch (e) {
    return { status: 0, ms: Date.now() - started, retryAfter: null, body: { error: String(e) } };
  }
};

it("507 or 503, never 500; ingest back by itself once space is freed; nothing acknowledged lost", async () => {
  const acknowledged: string[] = [];
  for (let i = 0; i < 20; i++) {
    const ids = [`pgfull-a-${i}-0`, `pgfull-a-${i}-1`];
    expect((await send(ids)).status).toBe(200);
    acknowledged.push(...ids);
  }
  fill();

  const refusals: Awaited<ReturnType<typeof send>>[] = [];
  let n = 0;
  const writer = async (k: number) => {
    for (let tries = 0; tries < 400 && refusals.length < 12; tries++) {
      const ids = [`pgfull-b-${k}-${n++}`, `pgfull-b-${k}-${n++}`];
      const r = await send(ids);
      if (r.status === 200) acknowledged.push(...ids);
      else refusals.push(r);
    }
  };
  await Promise.all(Array.from({ length: 4 }, (_, k) => writer(k)));
  expect(refusals.length, "the disk never refused").toBeGreaterThan(0);
  for (const r of refusals) {
    expect([507, 503], JSON.stringify(r.body)).toContain(r.status);
    expect(r.body.error.code).toBe(r.status === 507 ? "storage_full" : "unavailable");
    expect(Number(r.retryAfter)).toBeGreaterThan(0);
    expect(r.ms).toBeLessThanOrEqual(REQUEST_DEADLINE_MS);
  }
  // Reads: 200 while the database is up (a table that cannot grow refuses only writes); a
  // PANIC on the WAL's disk takes it down for a while, and then they are 503 too, never 500.
  const read = await fetch(`${app.base}/api/v1/operations?limit=5`, { headers: { authorization: `Bearer ${tokens.read}` } });
  const readBody = await read.text();
  if (placement === "data") expect(read.status, readBody).toBe(200);
  else expect([200, 503], readBody).toContain(read.status);

  // Space again. The server is not restarted.
  rmSync(filler);
  const healed = Date.now();
  // What a supervisor (systemd, a container's restart policy) does: start the database again whenever it has stopped.
  let stopped = false;
  const supervise = () => {
    if (cluster.running()) return;
    stopped = true;
    cluster.restart();
  };
  supervise();
  let back = await send([`pgfull-c-0`]);
  while (back.status !== 200 && Date.now() - healed < 30_000) {
    await new Promise((r) => setTimeout(r, 100));
    supervise();
    back = await send([`pgfull-c-${Date.now()}`]);
  }
  expect(back.status, JSON.stringify(back.body)).toBe(200);
  const recovered = Date.now() - healed;
  for (let i = 1; i < 10; i++) {
    const ids = [`pgfull-d-${i}`];
    expect((await send(ids)).status).toBe(200);
    acknowledged.push(...ids);
  }

  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const stored = new Set((await client.query<{ id: string }>("SELECT operation_id AS id FROM operations")).rows.map((r) => r.id));
    const missing = acknowledged.filter((id) => !stored.has(id));
    expect(missing).toEqual([]);
  } finally {
    await client.end();
  }
  process.env.DATABASE_URL = url;
  const { verdict } = await verifyStoredChain();
  await disconnect();
  expect(verdict, JSON.stringify(verdict)).toMatchObject({ ok: true });
  const statuses = refusals.reduce<Record<number, number>>((a, r) => ((a[r.status] = (a[r.status] ?? 0) + 1), a), {});
  console.log(
    `pg disk full (${placement}): ${acknowledged.length} acknowledged, refused ${JSON.stringify(statuses)} (longest ${Math.max(...refusals.map((r) => r.ms))} ms), ${stopped ? "PostgreSQL stopped after a PANIC and was started again by the harness" : "PostgreSQL stayed up"}, ingest back ${recovered} ms after space was freed, 0 lost`,
  );
}, 150_000);
});
