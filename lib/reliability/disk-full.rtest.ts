/**
 * The disk fills (issue 35, part 3): the SQLite database lives on a small tmpfs this test mounts
 * (it runs as root, as CI does), a filler file takes the rest of the space, and ingest goes on
 * from four writers until the disk refuses. Then:
 *   - ingest answers 507 `storage_full` with Retry-After and a sentence, never a 500 or a hang;
 *   - reads keep working (the list, one operation);
 *   - an audit export to that disk fails and leaves no file that looks complete; a checkpoint
 *     either still fits (one small row) or fails saying why;
 *   - once the filler is removed, ingest is taken again without a restart, the export and the
 *     checkpoint work, every acknowledged record is stored and `audit:verify` passes.
 * RELIABILITY_DISK_RUNS fills and frees the disk that many times in one server's life (once in
 * `npm test`; `npm run soak:faults -- --fault disk --runs N`).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync, closeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInHttp } from "@/lib/testing/sessions";
import { divergentRecord, prepareDatabase, startApp, type App, type Tokens } from "./harness";
import { runCli } from "@/lib/testing/cli";

const mount = mkdtempSync(path.join(os.tmpdir(), "reconcile-full-"));
const file = path.join(mount, "reconcile.db");
const url = `file:${file}`;
const filler = path.join(mount, "filler");
let app: App;
let tokens: Tokens;
let admin: { email: string; password: string };
let mounted = false;

/** Fills the disk: writes until it refuses, so what is left is less than one write's pages. */
function fill(): number {
  const fd = openSync(filler, "a");
  const chunk = Buffer.alloc(64 * 1024, 1);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
  } finally {
    closeSync(fd);
  }
  return written;
}

const cli = (args: string[]) => runCli(url, args, { CHECKPOINT_KEY_FILE: path.join(os.tmpdir(), `reconcile-full-key-${process.pid}.pem`) });

beforeAll(async () => {
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=48m", "tmpfs", mount]);
  mounted = true;
  const prepared = await prepareDatabase(url, "disk-full");
  tokens = prepared.tokens;
  admin = prepared;
  app = await startApp(url, { env: { CHECKPOINT_KEY_FILE: path.join(os.tmpdir(), `reconcile-full-key-${process.pid}.pem`) } });
}, 120_000);

afterAll(async () => {
  await app?.stop();
  if (mounted) execFileSync("umount", ["-l", mount]);
  rmSync(mount, { recursive: true, force: true });
});

const send = async (ids: string[]) => {
  const started = Date.now();
  const res = await fetch(`${app.base}/api/v1/receipts`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.ingest}`, "content-type": "application/json" },
    body: JSON.stringify({ records: ids.map((id) => divergentRecord(id, "full")) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, ms: Date.now() - started, retryAfter: res.headers.get("retry-after"), body: text ? JSON.parse(text) : null };
};

/** RELIABILITY_DISK_RUNS: fills and frees the disk this many times (`npm run soak:faults -- --fault disk --runs N`). */
const RUNS = Math.max(1, Number(process.env.RELIABILITY_DISK_RUNS ?? 1));

/** One fill and free: what was acknowledged, what was refused, and how long ingest took to come back. */
async function fillAndFree(run: number, cookie: string, acknowledged: string[]) {
  const tag = `r${run}`;
  for (let i = 0; i < 20; i++) {
    const ids = [`full-${tag}-a-${i}-0`, `full-${tag}-a-${i}-1`];
    const r = await send(ids);
    expect(r.status).toBe(200);
    acknowledged.push(...ids);
  }
  fill();

  // Four writers until every one has been refused a few times.
  const refusals: Awaited<ReturnType<typeof send>>[] = [];
  let n = 0;
  const writer = async (k: number) => {
    for (let tries = 0; tries < 400 && refusals.length < 12; tries++) {
      const ids = [`full-${tag}-b-${k}-${n++}`, `full-${tag}-b-${k}-${n++}`];
      const r = await send(ids);
      if (r.status === 200) acknowledged.push(...ids);
      else refusals.push(r);
    }
  };
  await Promise.all(Array.from({ length: 4 }, (_, k) => writer(k)));
  expect(refusals.length, "the disk never refused").toBeGreaterThan(0);
  for (const r of refusals) {
    expect([r.status, r.body?.error?.code], JSON.stringify(r.body)).toEqual([507, "storage_full"]);
    expect(r.body.error.message).toMatch(/disk|space/);
    expect(Number(r.retryAfter)).toBeGreaterThan(0);
    expect(r.ms).toBeLessThan(15_000);
  }

  // Reads still answer.
  const read = (p: string) => fetch(`${app.base}${p}`, { headers: { authorization: `Bearer ${tokens.read}` } });
  expect((await read("/api/v1/operations?limit=5")).status).toBe(200);
  expect((await read(`/api/v1/operations/${acknowledged[0]}`)).status).toBe(200);
  expect((await fetch(`${app.base}/api/health`)).status).toBe(200);
  for (const page of ["/p/default", "/p/default/operations", `/p/default/operations/${acknowledged[0]}`]) {
    const res = await fetch(`${app.base}${page}`, { headers: { cookie }, redirect: "manual" });
    expect(res.status, page).toBe(200);
  }

  // An export to the full disk fails and leaves nothing that looks like an export; so does a checkpoint.
  const out = path.join(mount, "export.ndjson");
  rmSync(out, { force: true });
  const exported = await cli(["audit:export", "--format", "ndjson", "--out", out]);
  expect(exported.status, exported.stdout).not.toBe(0);
  expect(exported.stderr).toMatch(/space|disk|ENOSPC|full/i);
  expect(existsSync(out)).toBe(false);
  // A checkpoint is one small row: it may still fit (the WAL's own space is reused), or it fails saying why.
  const checkpoint = await cli(["audit:checkpoint"]);
  if (checkpoint.status !== 0) expect(checkpoint.stderr).toMatch(/disk is full/);
  else expect(checkpoint.stdout).toContain("reconcile-checkpoint v1");

  // Space again: ingest is taken without a restart.
  rmSync(filler);
  const healed = Date.now();
  let back = await send([`full-${tag}-c-0`]);
  while (back.status !== 200 && Date.now() - healed < 20_000) {
    await new Promise((r) => setTimeout(r, 200));
    back = await send([`full-${tag}-c-${Date.now()}`]);
  }
  expect(back.status, JSON.stringify(back.body)).toBe(200);
  const recovered = Date.now() - healed;
  for (let i = 1; i < 10; i++) {
    const ids = [`full-${tag}-d-${i}`];
    expect((await send(ids)).status).toBe(200);
    acknowledged.push(...ids);
  }
  const exportedAfter = await cli(["audit:export", "--format", "ndjson", "--out", out]);
  expect(exportedAfter.status, exportedAfter.stderr).toBe(0);
  expect(readdirSync(mount).filter((f) => f.startsWith("export"))).toEqual(["export.ndjson"]);
  rmSync(out);
  expect((await cli(["audit:checkpoint"])).status).toBe(0);
  return { refused: refusals.length, longestMs: Math.max(...refusals.map((r) => r.ms)), recovered };
}

describe("a full disk", () => {
  it("refuses ingest with 507 and a sentence, keeps reads, and takes ingest again once space is freed, losing nothing", async () => {
    const acknowledged: string[] = [];
    const signed = await signInHttp(admin.email, admin.password, {}, app.base);
    expect(signed.cookie, signed.location).toBeTruthy();
    const runs: Awaited<ReturnType<typeof fillAndFree>>[] = [];
    for (let run = 0; run < RUNS; run++) {
      const r = await fillAndFree(run, signed.cookie!, acknowledged);
      runs.push(r);
      console.log(`disk full, run ${run + 1}: ${r.refused} refused 507 (longest ${r.longestMs} ms), ingest back ${r.recovered} ms after space was freed`);
    }

    // Nothing acknowledged is lost, and the chain verifies.
    const db = new Database(file, { readonly: true });
    try {
      const stored = new Set((db.prepare("SELECT operation_id FROM operations").all() as { operation_id: string }[]).map((r) => r.operation_id));
      for (const id of acknowledged) expect(stored.has(id), `${id} was acknowledged`).toBe(true);
    } finally {
      db.close();
    }
    const verified = await cli(["audit:verify"]);
    expect(verified.status, verified.stderr).toBe(0);
    const back = runs.map((r) => r.recovered).sort((a, b) => a - b);
    console.log(
      `| disk full (SQLite, tmpfs) | ${RUNS} | ${acknowledged.length} | 0 | ${runs.reduce((a, r) => a + r.refused, 0)} refused 507, longest ${Math.max(...runs.map((r) => r.longestMs))} ms | ingest back ${back[back.length >> 1]} / ${back[back.length - 1]} ms (median / max) |`,
    );
  }, Math.max(900_000, RUNS * 120_000));
});
