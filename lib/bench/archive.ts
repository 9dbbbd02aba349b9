/**
 * `npm run bench:archive`: retention's two costs, in one run on a fresh database (SQLite by
 * default; `--database-url postgresql://…/<fresh db>`): sealing (records/s written to a directory
 * archive, read back, verified and deleted) and verifying with the archive (the segments walked
 * and the live chain after them) against verifying the same records in the database before they
 * were sealed, as a ratio. N operations (`--records`, default 20,000) of one verified receipt
 * each are ingested through the real use case first (two chain records each). Prints figures;
 * asserts nothing (docs/BENCHMARKS.md).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { records: { type: "string", default: "20000" }, "database-url": { type: "string" } } });
const N = Number(values.records);
const tmp = mkdtempSync(path.join(os.tmpdir(), "bench-archive-"));
const url = values["database-url"] ?? `file:${path.join(tmp, "bench.db")}`;
process.env.DATABASE_URL = url;
process.env.CHECKPOINT_KEY_FILE = path.join(tmp, "key.pem");
process.env.RECONCILE_CHECKPOINT_EVERY = "999999999,999h";

async function main() {
  const { deployMigrations } = await import("../cli/schema-engine");
  await deployMigrations(url);
  const { ingestRecords } = await import("../store/ingest/records");
  const { systemSender } = await import("../domain/trust");
  const { writeCheckpoint } = await import("../store/chain/checkpoints");
  const { verifyStoredChain } = await import("../store/chain/verify-chain");
  const { sealExpired } = await import("../store/archive/seal");
  const { openTarget } = await import("../archive/targets");
  const { walkSegments } = await import("../archive/segments");
  const { disconnect } = await import("../store/db/db");

  const at = "2026-08-28T10:00:00Z";
  for (let i = 0; i < N; i += 500) {
    const ids = Array.from({ length: Math.min(500, N - i) }, (_, j) => `bench-${i + j}`);
    await ingestRecords(
      ids.map((id, index) => ({
        index,
        operationId: id,
        raw: { operation_id: id, receipt: { status: "accepted", observed_at: at }, canonical_read: { status: "match", observed_at: "2026-08-28T10:05:00Z", evidence: { object_id: `o-${id}` } } },
        sender: systemSender("bench"),
      })),
    );
  }
  await writeCheckpoint();

  const t0 = performance.now();
  const before = await verifyStoredChain();
  const verifyDbSeconds = (performance.now() - t0) / 1000;
  if (!before.verdict.ok) throw new Error(before.verdict.problem);

  const target = openTarget(`file://${path.join(tmp, "archive")}`);
  const t1 = performance.now();
  const report = await sealExpired(target, 1, { now: new Date(Date.now() + 2 * 86_400_000) });
  const sealSeconds = (performance.now() - t1) / 1000;

  const t2 = performance.now();
  let archived = 0;
  for await (const s of walkSegments(target, "default", 0, { linked: false })) archived += s.records.length;
  const after = await verifyStoredChain();
  const verifyArchiveSeconds = (performance.now() - t2) / 1000;
  if (!after.verdict.ok) throw new Error(after.verdict.problem);
  const total = archived + after.verdict.count;

  const rate = (n: number, s: number) => Math.round(n / s);
  console.log(
    JSON.stringify(
      {
        database: url.startsWith("file:") ? "sqlite" : "postgresql",
        records: before.verdict.count,
        sealed: report.records,
        segments: report.sealed.length,
        sealRecordsPerSecond: rate(report.records, sealSeconds),
        verifyDatabaseRecordsPerSecond: rate(before.verdict.count, verifyDbSeconds),
        verifyWithArchiveRecordsPerSecond: rate(total, verifyArchiveSeconds),
        verifyWithArchiveRatio: Number((rate(total, verifyArchiveSeconds) / rate(before.verdict.count, verifyDbSeconds)).toFixed(2)),
      },
      null,
      2,
    ),
  );
  await disconnect();
}

main()
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(() => rmSync(tmp, { recursive: true, force: true }));
