import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walkSegments } from "@/lib/archive/segments";
import { openTarget, type ArchiveTarget } from "@/lib/archive/targets";
import { systemSender } from "@/lib/domain/trust";
import { runCli } from "@/lib/testing/cli";
import { freshDatabase, type FreshDatabase } from "@/lib/testing/own-server";

/**
 * Retention on the suite's kind of database (SQLite, or PostgreSQL with INTEGRATION_DATABASE_URL):
 * a fresh database of its own (sealing deletes), the store's real sealing, the real append-only
 * triggers. "Now" is moved two days ahead instead of records back: the chain's times are the server's.
 */
let fresh: FreshDatabase;
const dirs: string[] = [];
let s3: S3rver;
let s3Endpoint = "";
const LATER = new Date(Date.now() + 2 * 86_400_000);

const store = {
  seal: () => import("./seal"),
  db: () => import("@/lib/store/db/db"),
  ingest: () => import("@/lib/store/ingest/records"),
  checkpoints: () => import("@/lib/store/chain/checkpoints"),
  verify: () => import("@/lib/store/chain/verify-chain"),
};

beforeAll(async () => {
  fresh = await freshDatabase("retention");
  process.env.DATABASE_URL = fresh.url;
  process.env.CHECKPOINT_KEY_FILE = path.join(tempDir(), "key.pem");
  s3 = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: tempDir() });
  s3Endpoint = `http://127.0.0.1:${(await s3.run()).port}`;
  const client = new S3Client({ endpoint: s3Endpoint, forcePathStyle: true, region: "us-east-1", credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } });
  await client.send(new CreateBucketCommand({ Bucket: "archive" }));
});

afterAll(async () => {
  await (await store.db()).disconnect();
  await s3?.close();
  await fresh?.drop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "reconcile-retention-"));
  dirs.push(d);
  return d;
}

let n = 0;
/** The directory test 2 seals into, and the S3 target test 3 seals into. */
let dirTarget: ArchiveTarget;
let dirPath = "";
let s3Target: ArchiveTarget;
/** `count` operations, each an accepted receipt a canonical read confirms (nothing to review); `review`: a receipt alone, which needs review. */
async function ingest(count: number, review = false): Promise<string[]> {
  const { ingestRecords } = await store.ingest();
  const ids = Array.from({ length: count }, () => `ret-${++n}`);
  const at = "2026-08-28T10:00:00Z";
  const raw = (id: string) => ({ operation_id: id, receipt: { status: "accepted", observed_at: at }, ...(review ? {} : { canonical_read: { status: "match", observed_at: "2026-08-28T10:05:00Z", evidence: { object_id: `obj-${id}` } } }) });
  const results = await ingestRecords(ids.map((id, index) => ({ index, operationId: id, raw: raw(id), sender: systemSender("itest") })));
  expect(results.filter((r) => "error" in r)).toEqual([]);
  return ids;
}

async function raw(sql: string): Promise<unknown> {
  const db = await (await store.db()).writer();
  return db.$executeRawUnsafe(sql);
}

const refused = async (sql: string, what: RegExp) => {
  await expect(raw(sql), sql).rejects.toThrow(what);
};

describe("retention", () => {
  it("refuses every DELETE and UPDATE of the chain and operations until a segment is sealed, and keeps sealed_through append-only", async () => {
    await ingest(3);
    await refused("DELETE FROM chain_records WHERE seq = 1", /chain_records is append-only/);
    await refused("UPDATE chain_records SET actor = 'x' WHERE seq = 1", /chain_records is append-only/);
    await refused("DELETE FROM operations", /operations is append-only/);
    await refused("UPDATE operations SET created_at = 'x'", /operations is append-only/);
    // A chain the database does not have (it has one), and a segment that ends before it starts.
    await refused("INSERT INTO sealed_through (chain, first_seq, sealed_through_seq, head_hash, records, location, segment_sha256, sealed_at) VALUES (7, 1000000, 1000001, 'h', 2, 'l', 's', 't')", /no such chain/);
    await refused("INSERT INTO sealed_through (chain, first_seq, sealed_through_seq, head_hash, records, location, segment_sha256, sealed_at) VALUES (0, 1000005, 1000001, 'h', 2, 'l', 's', 't')", /must start after/);
  });

  it("seals the old records into a directory, deletes them, and the live chain verifies from the sealed head", async () => {
    const { sealExpired, sealedSegments } = await store.seal();
    const { writeCheckpoint } = await store.checkpoints();
    await ingest(4);
    const checkpoint = await writeCheckpoint();
    const after = await ingest(2); // not covered by a signed checkpoint: stays live
    const dir = (dirPath = tempDir());
    const target = (dirTarget = openTarget(`file://${dir}`));
    // The checkpoint's webhook announcement still waits for delivery: nothing it covers goes yet.
    await raw(`INSERT INTO webhook_messages (id, type, body, link, created_at) VALUES ('msg-ret', 'checkpoint.created', '{"data":{"size":${checkpoint!.size}}}', 'l', 't')`);
    await raw("INSERT INTO webhook_deliveries (id, message_id, endpoint_id, status, attempts, created_at, updated_at) VALUES ('del-ret', 'msg-ret', 'ep', 'pending', 0, 't', 't')");
    const waiting = await sealExpired(target, 1, { now: LATER });
    expect(waiting.sealed).toEqual([]);
    expect(waiting.stoppedAt).toMatchObject({ seq: 1, why: expect.stringMatching(/webhook announcement is delivered/) });
    await raw("UPDATE webhook_deliveries SET status = 'delivered' WHERE id = 'del-ret'");
    const report = await sealExpired(target, 1, { now: LATER });
    expect(report.stoppedAt?.why).toMatch(/no signed checkpoint whose webhook announcement is delivered covers it/);
    expect(report.sealed.length).toBeGreaterThan(0);
    const last = report.sealed[report.sealed.length - 1];
    expect(last.last_seq).toBe(checkpoint!.size);
    expect((await sealedSegments()).filter((s) => s.chain === 0)).toEqual(report.sealed);
    // Gone from the database, down to the operations and their rows; the later ones stay.
    expect(await fresh.query(`SELECT seq FROM chain_records WHERE seq <= ${last.last_seq}`)).toEqual([]);
    expect(await fresh.query("SELECT operation_id FROM operations ORDER BY created_seq")).toEqual(after.map((operation_id) => ({ operation_id })));
    expect((await fresh.query<{ operation_id: string }>("SELECT operation_id FROM operation_views")).map((r) => r.operation_id).sort()).toEqual([...after].sort());
    // The archive.sealed record names the segment.
    const [sealedRecord] = await fresh.query<{ payload: string }>("SELECT payload FROM chain_records WHERE kind = 'security' ORDER BY seq DESC LIMIT 1");
    expect(JSON.parse(sealedRecord.payload)).toMatchObject({ type: "archive.sealed", last_seq: last.last_seq, location: last.location, sha256: last.sha256 });
    // A live record is still refused.
    await refused(`DELETE FROM chain_records WHERE seq = ${last.last_seq + 1}`, /chain_records is append-only/);
    // The segments walk from the genesis hash to the sealed head, where the live chain continues.
    const walked = [];
    for await (const s of walkSegments(target, "default", 0, { linked: false })) walked.push(...s.records);
    expect(walked.map((r) => r.seq)).toEqual(Array.from({ length: last.last_seq }, (_, i) => i + 1));
    expect(walked[walked.length - 1].hash).toBe(last.head_hash);
    const { verifyStoredChain } = await store.verify();
    const { verdict, sealed } = await verifyStoredChain();
    expect(sealed).toMatchObject({ seq: last.last_seq, hash: last.head_hash });
    expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
    // Nothing more may go: running again seals nothing.
    expect((await sealExpired(target, 1, { now: LATER })).sealed).toEqual([]);
    // The rows themselves are never changed or removed.
    await refused("UPDATE sealed_through SET location = 'elsewhere'", /sealed_through is append-only/);
    await refused("DELETE FROM sealed_through", /sealed_through is append-only/);
  });

  it("a crash after writing a segment and before deleting is safe: the next run writes it again and goes on, to S3", async () => {
    const { sealExpired } = await store.seal();
    const { writeCheckpoint } = await store.checkpoints();
    await writeCheckpoint();
    const target: ArchiveTarget = (s3Target = openTarget("s3://archive/itest", { ...process.env, AWS_ENDPOINT_URL: s3Endpoint, AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" }));
    // A target that fails on its last write (the checkpoint object) once: the seal stops before any delete.
    let failed = false;
    const crashing: ArchiveTarget = {
      ...target,
      url: target.url,
      put: async (key, body) => {
        if (!failed && key.endsWith(".checkpoint.json")) {
          await target.put(key.replace(".checkpoint.json", ".ndjson.gz"), body);
          failed = true;
          throw new Error("crash");
        }
        return target.put(key, body);
      },
      get: (k) => target.get(k),
      list: (p) => target.list(p),
      locationOf: (k) => target.locationOf(k),
    };
    const before = await fresh.query<{ c: number }>("SELECT COUNT(*) AS c FROM chain_records");
    await expect(sealExpired(crashing, 1, { now: LATER })).rejects.toThrow(/crash/);
    expect(await fresh.query<{ c: number }>("SELECT COUNT(*) AS c FROM chain_records")).toEqual(before);
    const report = await sealExpired(crashing, 1, { now: LATER });
    expect(report.sealed.length).toBe(1);
    expect(report.sealed[0].location).toMatch(/^s3:\/\/archive\/itest\/default\/0\/\d+-\d+\.ndjson\.gz$/);
    const { verifyStoredChain } = await store.verify();
    expect((await verifyStoredChain()).verdict.ok).toBe(true);
    // An operation that needs review stays, and so does everything after it.
    const [held] = await ingest(1, true);
    expect(await fresh.query("SELECT needs_review FROM operation_views WHERE operation_id = $1", [held])).toEqual([{ needs_review: expect.anything() }]);
    await ingest(1);
    await writeCheckpoint();
    const stopped = await sealExpired(target, 1, { now: LATER });
    expect(stopped.stoppedAt?.why).toMatch(new RegExp(`operation ${held} needs review`));
    expect(await fresh.query(`SELECT operation_id FROM operations WHERE operation_id = '${held}'`)).toEqual([{ operation_id: held }]);
  });

  it("audit:verify starts at the last sealed head, and with --archive walks the segments and says where they meet the live chain", async () => {
    const env = { RECONCILE_RETENTION_DAYS: "" };
    // audit:verify holds each sealed_through row to retention being on, with an archive.
    const on = { RECONCILE_RETENTION_DAYS: "1", RECONCILE_ARCHIVE_URL: `file://${dirPath}` };
    const plain = await runCli(fresh.url, ["audit:verify"], on);
    expect(plain.stdout).toMatch(/starting at the last sealed head: seq \d+/);
    expect(plain.stdout).toMatch(/sealed_through: \d+ row\(s\), each named by a chained archive.sealed record/);
    expect(plain.status, plain.stderr).toBe(0);
    // The directory holds only the first segments (the later ones went to S3): they do not meet.
    const partial = await runCli(fresh.url, ["audit:verify", "--archive", dirPath], on);
    expect(partial.stderr).toMatch(/the archive ends at seq \d+, but the live chain continues from seq \d+/);
    expect(partial.status).toBe(1);
    // Copied together (segments move between targets as they are), they walk end to end.
    for (const key of await s3Target.list("default/0/")) await dirTarget.put(key, (await s3Target.get(key))!);
    const whole = await runCli(fresh.url, ["audit:verify", "--archive", `file://${dirPath}`], on);
    expect(whole.stdout).toMatch(/the archive and the live chain meet at seq \d+/);
    expect(whole.stdout).toMatch(/checkpoint \(size \d+, signed [^)]+\): matches the archive/);
    expect(whole.status, whole.stderr).toBe(0);
    // The export answers for the sealed records from the archive (a note says so), and verifies from the genesis hash.
    const file = path.join(tempDir(), "export.ndjson");
    const exported = await runCli(fresh.url, ["audit:export", "--out", file], { ...env, RECONCILE_ARCHIVE_URL: `file://${dirPath}` });
    expect(exported.status, exported.stderr).toBe(0);
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { kind: string; seq?: number; from_archive?: boolean });
    expect(lines[0]).toMatchObject({ kind: "archive", from_archive: true });
    expect(lines[1]).toMatchObject({ seq: 1 });
    const fromFile = await runCli(fresh.url, ["audit:verify", "--file", file], env);
    expect(fromFile.stdout).toMatch(/chain intact/);
    expect(fromFile.status, fromFile.stderr).toBe(0);
    // Without the archive, the export names the sealed head and verifies from there.
    const liveOnly = path.join(tempDir(), "live.ndjson");
    expect((await runCli(fresh.url, ["audit:export", "--out", liveOnly], env)).status).toBe(0);
    const note = JSON.parse(readFileSync(liveOnly, "utf8").split("\n")[0]) as { from_archive: boolean; note: string };
    expect(note).toMatchObject({ from_archive: false, note: expect.stringMatching(/no RECONCILE_ARCHIVE_URL/) });
    const liveVerified = await runCli(fresh.url, ["audit:verify", "--file", liveOnly], env);
    expect(liveVerified.stdout).toMatch(/starting at the sealed head the export names/);
    expect(liveVerified.status, liveVerified.stderr).toBe(0);
  });

  it("the daily job seals, finishes and enqueues the next day's in one go; enqueueing today's twice adds one", async () => {
    const { enqueueTodaysSeal, ARCHIVE_SEAL_JOB } = await import("./schedule");
    const { claimJobs } = await import("@/lib/store/work/jobs");
    const { runSealJob } = await import("@/lib/retention/jobs");
    Object.assign(process.env, { RECONCILE_RETENTION_DAYS: "0", RECONCILE_ARCHIVE_URL: `file://${dirPath}` });
    try {
      await enqueueTodaysSeal();
      await enqueueTodaysSeal();
      const [job, ...more] = await claimJobs(ARCHIVE_SEAL_JOB, 5, 60_000);
      expect(more).toEqual([]);
      await runSealJob(job);
      const today = new Date().toISOString().slice(0, 10);
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      const rows = await fresh.query<{ key: string; status: string }>(`SELECT key, status FROM job WHERE kind = '${ARCHIVE_SEAL_JOB}' ORDER BY key`);
      expect(rows).toEqual([
        { key: `archive-seal:${today}`, status: "done" },
        { key: `archive-seal:${tomorrow}`, status: "pending" },
      ]);
    } finally {
      delete process.env.RECONCILE_RETENTION_DAYS;
      delete process.env.RECONCILE_ARCHIVE_URL;
    }
  });

  it("a project's own days, set by its admin, need an archive, override the server's, and schedule today's seal at once", async () => {
    const { changeProjectSettings } = await import("@/lib/api/projects");
    const { sealNow } = await import("@/lib/retention/jobs");
    const { ARCHIVE_SEAL_JOB } = await import("./schedule");
    const seals = () => fresh.query<{ key: string; status: string }>(`SELECT key, status FROM job WHERE kind = '${ARCHIVE_SEAL_JOB}' ORDER BY key`);
    await fresh.execute(`DELETE FROM job WHERE kind = '${ARCHIVE_SEAL_JOB}'`);
    // No archive: nowhere to seal to, so nothing changes.
    await expect(changeProjectSettings({ projectId: "default", retentionDays: 400, actor: "itest" })).rejects.toThrow(/retention_days: this server has no archive/);
    expect((await fresh.query<{ retention_days: number | null }>("SELECT retention_days FROM projects WHERE id = 'default'"))[0].retention_days).toBeNull();
    expect(await seals()).toEqual([]);
    Object.assign(process.env, { RECONCILE_RETENTION_DAYS: "0", RECONCILE_ARCHIVE_URL: `file://${dirPath}` });
    try {
      const p = await changeProjectSettings({ projectId: "default", retentionDays: 36_500, actor: "itest" });
      expect(p.retentionDays).toBe(36_500);
      expect(await seals()).toEqual([{ key: `archive-seal:${new Date().toISOString().slice(0, 10)}`, status: "pending" }]);
      // Its 36,500 days, not the server's 0: nothing is old enough.
      const before = await fresh.query<{ n: number | string }>("SELECT count(*) AS n FROM chain_records");
      expect((await sealNow())?.sealed).toEqual([]);
      expect(await fresh.query<{ n: number | string }>("SELECT count(*) AS n FROM chain_records")).toEqual(before);
      delete process.env.RECONCILE_RETENTION_DAYS;
      await changeProjectSettings({ projectId: "default", retentionDays: null, actor: "itest" });
      expect(await sealNow()).toBeNull();
    } finally {
      delete process.env.RECONCILE_RETENTION_DAYS;
      delete process.env.RECONCILE_ARCHIVE_URL;
    }
  });
});
