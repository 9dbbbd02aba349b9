import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemSender } from "@/lib/domain/trust";
import { runCli } from "@/lib/testing/cli";
import { freshDatabase, type FreshDatabase } from "@/lib/testing/own-server";

/**
 * Issue 47, item 2: the delete guard against direct write access (the threat the triggers exist
 * for), on the suite's kind of database, in a fresh database of its own (the test deletes). A
 * sealed_through row retention did not write must neither unlock deletes beyond its chain nor
 * pass audit:verify; on SQLite, INSERT OR REPLACE must not remove a chained row past the triggers.
 */
let fresh: FreshDatabase;
let dir = "";
const sqlite = () => fresh.url.startsWith("file:");

beforeAll(async () => {
  fresh = await freshDatabase("guard");
  process.env.DATABASE_URL = fresh.url;
  dir = mkdtempSync(path.join(tmpdir(), "reconcile-guard-"));
});

afterAll(async () => {
  await (await import("@/lib/store/db/db")).disconnect();
  await fresh?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function ingest(count: number): Promise<void> {
  const { ingestRecords } = await import("@/lib/store/ingest/records");
  const ids = Array.from({ length: count }, (_, i) => `guard-${i}`);
  const raw = (id: string) => ({ operation_id: id, receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } });
  const results = await ingestRecords(ids.map((id, index) => ({ index, operationId: id, raw: raw(id), sender: systemSender("itest") })));
  expect(results.filter((r) => "error" in r)).toEqual([]);
}

const refused = async (sql: string, what: RegExp) => {
  await expect(fresh.execute(sql), sql).rejects.toThrow(what);
};
const count = async (table: string) => Number((await fresh.query<{ n: number | string }>(`SELECT count(*) AS n FROM ${table}`))[0].n);
const row = (chain: number, first: number, last: number) =>
  `INSERT INTO sealed_through (chain, first_seq, sealed_through_seq, head_hash, records, location, segment_sha256, sealed_at) VALUES (${chain}, ${first}, ${last}, '${"0".repeat(64)}', 1, 'l', 's', 't')`;

describe("the delete guard", () => {
  it("on SQLite, INSERT OR REPLACE cannot swap a chained record, an operation or an instance event past the triggers", async () => {
    await ingest(3);
    const before = await fresh.query("SELECT * FROM chain_records ORDER BY seq");
    // The instance trail is in this database too (it is the default project's, the instance's own).
    await fresh.execute(
      `INSERT INTO instance_events (seq, recorded_at, actor, payload, prev_hash, hash) VALUES (1, 't', NULL, '{"type":"signout"}', '${"0".repeat(64)}', '${"1".repeat(64)}')`,
    );
    if (sqlite()) {
      await refused("INSERT OR REPLACE INTO chain_records (seq, kind, recorded_at, payload, prev_hash, hash) VALUES (1, 'security', 't', '{}', 'p', 'h')", /chain_records is append-only/);
      await refused("REPLACE INTO chain_records (seq, kind, recorded_at, payload, prev_hash, hash) VALUES (2, 'security', 't', '{}', 'p', 'h')", /chain_records is append-only/);
      await refused("INSERT OR REPLACE INTO operations (operation_id, created_seq, created_at) VALUES ('guard-0', 999, 't')", /operations is append-only/);
      await refused("INSERT OR REPLACE INTO operations (operation_id, created_seq, created_at) VALUES ('other', 1, 't')", /operations is append-only/);
      await refused("INSERT OR REPLACE INTO instance_events (seq, recorded_at, payload, prev_hash, hash) VALUES (1, 't', '{}', 'p', 'h')", /instance_events is append-only/);
    } else {
      // PostgreSQL has no REPLACE: its ON CONFLICT … DO UPDATE is an UPDATE, which the triggers refuse.
      await refused("INSERT INTO chain_records (seq, kind, recorded_at, payload, prev_hash, hash) VALUES (1, 'security', 't', '{}', 'p', 'h') ON CONFLICT (seq) DO UPDATE SET hash = 'h'", /chain_records is append-only/);
      await refused("INSERT INTO instance_events (seq, recorded_at, payload, prev_hash, hash) VALUES (1, 't', '{}', 'p', 'h') ON CONFLICT (seq) DO UPDATE SET hash = 'h'", /instance_events is append-only/);
    }
    expect(await fresh.query("SELECT * FROM chain_records ORDER BY seq")).toEqual(before);
    expect(await fresh.query<{ hash: string }>("SELECT hash FROM instance_events")).toEqual([{ hash: "1".repeat(64) }]);
    expect(await count("operations")).toBe(3);
  });

  it("a row for another chain is refused, so it cannot unlock chain 0's records", async () => {
    await refused(row(7, 1, 999_999_999), /no such chain/);
    await refused("DELETE FROM chain_records", /chain_records is append-only/);
    await refused("DELETE FROM operations", /operations is append-only/);
    expect(await count("chain_records")).toBeGreaterThan(0);
  });

  it("a hand-written chain-0 row lets the deletes through, but audit:verify refuses it and names what it found", async () => {
    const on = { RECONCILE_RETENTION_DAYS: "1", RECONCILE_ARCHIVE_URL: `file://${dir}` };
    expect((await runCli(fresh.url, ["audit:verify"], on)).status).toBe(0);
    // What the issue did: a row over every seq, then every record and operation gone.
    await fresh.execute(row(0, 1, 999_999_999));
    await fresh.execute("DELETE FROM chain_records");
    await fresh.execute("DELETE FROM operations");
    expect(await count("chain_records")).toBe(0);
    const forged = await runCli(fresh.url, ["audit:verify"], on);
    expect(forged.stderr).toMatch(/sealed_through row chain 0 seq 1-999999999 is named by no chained archive.sealed record/);
    expect(forged.stdout).not.toMatch(/starting at the last sealed head/);
    expect(forged.status).toBe(1);
    // With retention off (as it was in the issue), the row is refused for that alone.
    const off = await runCli(fresh.url, ["audit:verify"], { RECONCILE_RETENTION_DAYS: "", RECONCILE_ARCHIVE_URL: "" });
    expect(off.stderr).toMatch(/sealed_through holds 1 row\(s\) \(the first: chain 0 seq 1-999999999\), but retention is off for this project/);
    expect(off.status).toBe(1);
  });
});
