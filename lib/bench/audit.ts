/**
 * `npm run bench:audit`: the audit trail at volume. Seeds N chain records (default 1,000,000)
 * straight into a fresh embedded SQLite database (a valid hash chain, realistic payloads), then
 * measures, each in its own process so peak memory is its own:
 *   export  — the real export path (lib/api/audit-stream) to an NDJSON file: records/s, peak RSS;
 *   verify  — audit:verify --file on that export: records/s;
 *   verifydb — audit:verify on the database: records/s.
 * Prints figures; asserts nothing (docs/BENCHMARKS.md). `--records N`, `--db PATH` to reuse.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { chainHash, GENESIS_HASH } from "../domain/hash";

const { values } = parseArgs({ options: { records: { type: "string", default: "1000000" }, db: { type: "string" }, phase: { type: "string" }, out: { type: "string" } } });
const N = Number(values.records);
const tsx = [path.resolve("node_modules/tsx/dist/cli.mjs"), "--conditions=react-server"];

async function phase(name: string, dbFile: string, out: string) {
  process.env.DATABASE_URL = `file:${dbFile}`;
  const t0 = performance.now();
  let records = 0;
  if (name === "export") {
    const { createWriteStream } = await import("node:fs");
    const { exportText } = await import("../api/audit-stream");
    const file = createWriteStream(out);
    for await (const chunk of exportText({ format: "ndjson" })) {
      records += chunk.split("\n").length - 1;
      if (!file.write(chunk)) await new Promise<void>((r) => file.once("drain", () => r()));
    }
    await new Promise<void>((r) => file.end(() => r()));
  } else {
    const r = spawnSync(process.execPath, [...tsx, "lib/cli/index.ts", "audit:verify", ...(name === "verify" ? ["--file", out] : [])], { env: process.env, encoding: "utf8" });
    records = Number(/chain intact: (\d+)/.exec(r.stdout)?.[1] ?? 0);
    if (r.status !== 0) throw new Error(r.stderr);
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ records, seconds, maxRssMB: process.resourceUsage().maxRSS / 1024 }));
}

function seed(dbFile: string) {
  const env = { ...process.env, DATABASE_URL: `file:${dbFile}` };
  const r = spawnSync(process.execPath, [...tsx, "lib/cli/index.ts", "db:deploy"], { env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  const db = new Database(dbFile);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  const ins = db.prepare("INSERT INTO chain_records (seq, kind, operation_id, stage, observed_at, recorded_at, actor, payload, prev_hash, hash) VALUES (?, 'stage', ?, 'receipt', ?, ?, 'bench', ?, ?, ?)");
  let prev = GENESIS_HASH;
  const t0 = performance.now();
  const batch = db.transaction((from: number, to: number) => {
    for (let seq = from; seq <= to; seq++) {
      const recorded = new Date(Date.UTC(2026, 10, 1) + seq * 1000).toISOString();
      const payload = { stage: "receipt", observed_at: recorded, data: { status: "accepted", receipt_id: `r-${seq}`, observed_at: recorded, params: { text: `post number ${seq}` } } };
      const fields = { seq, kind: "stage" as const, operation_id: `op-${Math.floor(seq / 4)}`, recorded_at: recorded, actor: "bench", payload, prev_hash: prev };
      const hash = chainHash(fields);
      ins.run(seq, fields.operation_id, recorded, recorded, JSON.stringify(payload), prev, hash);
      prev = hash;
    }
  });
  for (let i = 1; i <= N; i += 10_000) {
    batch(i, Math.min(N, i + 9_999));
    process.stderr.write(`\rseeded ${Math.min(N, i + 9_999).toLocaleString()} of ${N.toLocaleString()}`);
  }
  process.stderr.write(`\n`);
  db.close();
  return (performance.now() - t0) / 1000;
}

async function main() {
  if (values.phase) return phase(values.phase, values.db!, values.out!);
  const dbFile = values.db ?? path.join(mkdtempSync(path.join(os.tmpdir(), "reconcile-bench-audit-")), "audit.db");
  const seeded = existsSync(dbFile) ? null : seed(dbFile);
  if (seeded !== null) console.log(`seeded ${N.toLocaleString()} chain records in ${seeded.toFixed(0)} s (${dbFile})`);
  const out = `${dbFile}.export.ndjson`;
  const run = (p: string, nodeOptions = "") => {
    const r = spawnSync(process.execPath, [...tsx, "lib/bench/audit.ts", "--phase", p, "--db", dbFile, "--out", out], {
      encoding: "utf8",
      env: { ...process.env, CHECKPOINT_KEY_FILE: `${dbFile}.key.pem`, NODE_OPTIONS: nodeOptions },
    });
    if (r.status !== 0) throw new Error(`${p}: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split("\n").pop()!) as { records: number; seconds: number; maxRssMB: number };
  };
  console.log(`Reconcile audit benchmark · ${os.cpus().length} cores · SQLite · node ${process.version}\n`);
  // V8 grows its heap lazily when memory is plentiful; the second run caps the heap to show the
  // export needs no more than that (memory does not grow with the number of records).
  for (const [label, opts] of [["default heap", ""], ["heap capped at 128 MB", "--max-old-space-size=128"]] as const) {
    const e = run("export", opts);
    console.log(`export (NDJSON, streamed to a file, ${label}): ${e.records.toLocaleString()} records in ${e.seconds.toFixed(1)} s = ${Math.round(e.records / e.seconds).toLocaleString()} records/s · peak RSS ${e.maxRssMB.toFixed(0)} MB · ${(statSync(out).size / 1e6).toFixed(0)} MB written`);
  }
  const v = run("verify");
  console.log(`verify the export file: ${v.records.toLocaleString()} records in ${v.seconds.toFixed(1)} s = ${Math.round(v.records / v.seconds).toLocaleString()} records/s`);
  const d = run("verifydb");
  console.log(`verify the database: ${d.records.toLocaleString()} records in ${d.seconds.toFixed(1)} s = ${Math.round(d.records / d.seconds).toLocaleString()} records/s`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
