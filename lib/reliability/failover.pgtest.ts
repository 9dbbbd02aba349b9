/**
 * PostgreSQL fails over under ingest (issue 35, part 1; failover.ts): a primary and a
 * synchronous standby (`synchronous_commit = remote_apply`) of this test's own, two app
 * instances on a URL listing both hosts with target_session_attrs=read-write; the primary is
 * SIGKILLed and the standby promoted. Nothing acknowledged is lost, every answer is a 2xx or a
 * 503 with Retry-After, ingest answers again by itself within seconds, and the chain verifies.
 * The standby is made to lag for a second before the kill (its WAL receiver stopped), which
 * is what tells synchronous replication from asynchronous: the second test runs the same with
 * `synchronous_commit = local` and must see acknowledged records lost (proving the count can see
 * a loss; docs/DEPLOY.md explains it). Before the kill, on the standby: a write through a kept connection is refused read-only
 * (25006), which drops that connection and counts as the database unavailable; a new
 * connection asking for read-write is refused as a standby (08001); and with a first host that
 * never answers, one connection fails at its deadline and the next find the primary; and
 * migrations deployed on the pair's URL go to the primary (the engine reads one host).
 * `npm run soak:faults -- --fault failover --runs N` is the long version.
 */
import net from "node:net";
import pg from "pg";
import { expect, it } from "vitest";
import { deployMigrations } from "@/lib/cli/schema-engine";
import { pgConnection } from "@/lib/store/db/pg-failover";
import { writableHostUrl } from "@/lib/store/db/pg-probe";
import { isDatabaseUnavailable } from "@/lib/store/db/unavailable";
import { runFailover } from "./failover";

it("the primary killed and the standby promoted: nothing acknowledged lost, ingest back by itself", async () => {
  const seen: { standbyWrite?: unknown; evicted?: number; readWrite?: unknown; silentFirst?: unknown[]; writable?: string; deployed?: string[]; primaryPort?: number } = {};
  const report = await runFailover({
    synchronousCommit: "remote_apply",
    // The standby stops receiving WAL a second before the kill: commits wait for it rather than being acknowledged and lost.
    lagMs: 1000,
    log: (l) => console.log(l),
    beforeKill: async (pair, database) => {
      const standby = `postgresql://dev:dev@127.0.0.1:${pair.standbyPort}/${database}`;
      const pool = new pg.Pool({ ...pgConnection(standby), max: 1 });
      const client = await pool.connect();
      seen.standbyWrite = await client.query("CREATE TABLE failover_probe (i int)").then(
        () => null,
        (e: unknown) => e,
      );
      client.release();
      seen.evicted = pool.totalCount;
      await pool.end();
      const rw = new pg.Pool({ ...pgConnection(`${standby}?target_session_attrs=read-write`), max: 1 });
      seen.readWrite = await rw.query("SELECT 1").then(
        () => null,
        (e: unknown) => e,
      );
      await rw.end();
      // A first host that never answers (a machine gone, not a refused port): the connection
      // that meets it fails at the connect deadline (503), and the next ones start from the host found good.
      const silent = net.createServer(() => {});
      await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
      const silentPort = (silent.address() as net.AddressInfo).port;
      const both = new pg.Pool({ ...pgConnection(`postgresql://dev:dev@127.0.0.1:${silentPort},127.0.0.1:${pair.primaryPort}/${database}?target_session_attrs=read-write`), connectionTimeoutMillis: 500 });
      seen.silentFirst = [];
      for (let i = 0; i < 3; i++) seen.silentFirst.push(await both.query<{ port: number }>("SELECT inet_server_port() AS port").then((r) => r.rows[0].port, (e: unknown) => e));
      await both.end();
      silent.close();
      // The migration engine reads one host: deploying on the pair's URL (standby first) goes to the primary.
      const pairUrl = `postgresql://dev:dev@127.0.0.1:${pair.standbyPort},127.0.0.1:${pair.primaryPort}/${database}?target_session_attrs=read-write`;
      seen.primaryPort = pair.primaryPort;
      seen.writable = await writableHostUrl(pairUrl);
      seen.deployed = (await deployMigrations(pairUrl)).applied;
    },
  });
  expect(seen.standbyWrite).toMatchObject({ code: "25006" });
  expect(isDatabaseUnavailable(seen.standbyWrite)).toBe(true);
  expect(seen.evicted).toBe(0);
  expect(seen.readWrite).toMatchObject({ code: "08001" });
  expect(String((seen.readWrite as Error).message)).toMatch(/is a standby/);
  expect(isDatabaseUnavailable(seen.silentFirst![0])).toBe(true);
  expect(seen.silentFirst!.slice(1)).toEqual([expect.any(Number), expect.any(Number)]);
  expect(seen.writable).toMatch(new RegExp(`^postgresql://dev:dev@127\\.0\\.0\\.1:${seen.primaryPort}/`));
  expect(seen.deployed).toEqual([]);

  expect(report.problems).toEqual([]);
  expect(report.lost).toBe(0);
  expect(report.acknowledged).toBeGreaterThan(10);
  expect(report.recoverMs).toBeLessThan(15_000);
}, 90_000);

it("the same with asynchronous replication (synchronous_commit = local): what the lagging standby had not received is lost", async () => {
  const report = await runFailover({ synchronousCommit: "local", lagMs: 1000, log: (l) => console.log(l) });
  // Lost, but whole: no request half-written, the chain verifies, every answer a 2xx or a 503.
  expect(report.problems).toEqual([]);
  expect(report.lost).toBeGreaterThan(0);
  expect(report.recoverMs).toBeLessThan(15_000);
}, 90_000);
