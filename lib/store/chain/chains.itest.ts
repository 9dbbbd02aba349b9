/**
 * Several hash chains (issue 17 part 3, lib/domain/chains.ts), end to end on the suite's kind of
 * database: the real server started with RECONCILE_CHAINS=4 on a fresh database, ingest over
 * HTTP, and the real command line to sign, verify and export. Each operation's records land in
 * its chain, each chain is gapless from its own genesis, a checkpoint signs the Merkle root of
 * the heads, and an edit in any chain is found. A database made with one chain keeps it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainOf, headsRoot } from "@/lib/domain/chains";
import { parseCheckpoint } from "@/lib/domain/checkpoint";
import { GENESIS_HASH } from "@/lib/domain/hash";
import { splitRecord } from "@/lib/domain/stages";
import { divergentRecord, fullRecord, prepareDatabase, startApp, type App, type Tokens } from "@/lib/reliability/harness";
import { freshDatabase, type FreshDatabase } from "@/lib/testing/own-server";
import { runCli } from "@/lib/testing/cli";

const N = 4;
const tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-chains-"));
const cleanup: (() => Promise<void> | void)[] = [() => rmSync(tmp, { recursive: true, force: true })];
let db: FreshDatabase;
let app: App;
let tokens: Tokens;

afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/**
 * The command line, without blocking this process: a blocking spawnSync of several seconds kept
 * the HTTP client from seeing the server close its idle keep-alive connection (after 5 s), and
 * the next fetch went out on the closed socket ("other side closed").
 */
const cli = (url: string, args: string[]) => runCli(url, args, { CHECKPOINT_KEY_FILE: path.join(tmp, "key.pem") });

const post = async (a: App, p: string, token: string, body: unknown) => {
  const res = await fetch(a.base + p, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

type Row = { seq: number; operation_id: string | null; prev_hash: string; hash: string; kind: string };
const rows = async (d: FreshDatabase) =>
  (await d.query<Row>("SELECT seq, operation_id, prev_hash, hash, kind FROM chain_records ORDER BY seq")).map((r) => ({ ...r, seq: Number(r.seq) }));

/** Changes one stored record's payload behind the append-only triggers' back, as an attacker with the database would. */
async function tamper(url: string, seq: number) {
  if (url.startsWith("file:")) {
    const d = new Database(url.slice("file:".length));
    d.exec("DROP TRIGGER chain_records_no_update");
    d.prepare("UPDATE chain_records SET payload = ? WHERE seq = ?").run(JSON.stringify({ forged: true }), seq);
    d.close();
    return;
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('ALTER TABLE chain_records DISABLE TRIGGER "chain_records_append_only"');
  await c.query("UPDATE chain_records SET payload = $1 WHERE seq = $2", [JSON.stringify({ forged: true }), seq]);
  await c.end();
}

beforeAll(async () => {
  db = await freshDatabase("chains");
  cleanup.push(db.drop);
  tokens = (await prepareDatabase(db.url, "chains", { chains: N })).tokens;
  app = await startApp(db.url, { env: { RECONCILE_CHAINS: String(N), CHECKPOINT_KEY_FILE: path.join(tmp, "key.pem"), RECONCILE_CHECKPOINT_EVERY: "1000000" } });
  cleanup.push(() => app.stop());
}, 180_000);

describe("several chains", () => {
  it("each operation's records go to its chain; every chain is gapless from its own genesis; the lock rows keep the heads", async () => {
    expect(app.output()).toContain(`(${N} hash chains)`);
    // Four clients at once, batches spanning every chain, then acts on one operation.
    const statuses = await Promise.all(
      Array.from({ length: 4 }, async (_, c) => {
        const out: number[] = [];
        for (let b = 0; b < 6; b++) {
          const records = Array.from({ length: 20 }, (_, i) => fullRecord(`chains-${c}-${b}-${i}`, `chains-run-${c}`));
          out.push((await post(app, "/api/v1/receipts", tokens.ingest, { records })).status);
        }
        return out;
      }),
    );
    expect(statuses.flat().every((s) => s === 200)).toBe(true);
    const target = "chains-divergent";
    expect((await post(app, "/api/v1/receipts", tokens.ingest, divergentRecord(target, "chains-run-0"))).status).toBe(201);
    expect((await post(app, `/api/v1/operations/${target}/comments`, tokens.review, { text: "looked at it" })).status).toBe(201);
    const fix = await post(app, `/api/v1/operations/${target}/corrections`, tokens.review, { action: "resolve", outcome: "not_applied", reason: "absent on the record", expected_last_correction_id: null });
    expect(fix.status).toBe(201);

    expect((await db.query<{ chains: number }>("SELECT chains FROM chain_settings"))[0].chains).toBe(N);
    const all = await rows(db);
    expect(all.filter((r) => r.kind === "stage" && r.operation_id !== target).length).toBe(4 * 6 * 20 * splitRecord(fullRecord("x", "y")).length);
    // Seqs are unique across the chains (the primary key says so too) and rise with time.
    expect(new Set(all.map((r) => r.seq)).size).toBe(all.length);
    const heads = [];
    for (let c = 0; c < N; c++) {
      const mine = all.filter((r) => chainOf(r.operation_id, N) === c);
      expect(mine.length).toBeGreaterThan(50);
      mine.forEach((r, k) => expect(r.prev_hash).toBe(k === 0 ? GENESIS_HASH : mine[k - 1].hash));
      heads.push({ seq: mine.at(-1)!.seq, hash: mine.at(-1)!.hash, records: mine.length });
    }
    const locks = await db.query<{ head_seq: number; head_hash: string; head_records: number }>("SELECT head_seq, head_hash, head_records FROM chain_lock WHERE id >= 1 ORDER BY id");
    expect(locks.map((l) => ({ seq: Number(l.head_seq), hash: l.head_hash, records: Number(l.head_records) }))).toEqual(heads);

    // Seqs follow time across chains: each request's operations, sent one after another by one
    // client, have higher seqs than the one before's, whatever their chains.
    const firstSeqOf = new Map<string, number>();
    for (const r of all) if (r.operation_id && !firstSeqOf.has(r.operation_id)) firstSeqOf.set(r.operation_id, r.seq);
    for (let c = 0; c < 4; c++) {
      for (let b = 1; b < 6; b++) {
        const before = Math.max(...Array.from({ length: 20 }, (_, i) => firstSeqOf.get(`chains-${c}-${b - 1}-${i}`)!));
        const after = Math.min(...Array.from({ length: 20 }, (_, i) => firstSeqOf.get(`chains-${c}-${b}-${i}`)!));
        expect(after).toBeGreaterThan(before);
      }
    }
    // The comment and the correction are on their operation's chain too.
    const acts = all.filter((r) => r.operation_id === target && r.kind !== "stage");
    expect(acts.map((r) => r.kind).sort()).toEqual(["comment", "correction"]);
  });

  it("a checkpoint signs the Merkle root of every head; audit:verify checks each chain against it; an export verifies as a file", async () => {
    const signed = await cli(db.url, ["audit:checkpoint"]);
    expect(signed.status).toBe(0);
    const checkpoint = parseCheckpoint(signed.stdout)!;
    expect(checkpoint.heads).toHaveLength(N);
    const all = await rows(db);
    expect(checkpoint.size).toBe(all.length);
    expect(checkpoint.head).toBe(headsRoot(checkpoint.heads!));
    for (const [c, h] of checkpoint.heads!.entries()) {
      const mine = all.filter((r) => chainOf(r.operation_id, N) === c);
      expect(h).toEqual({ seq: mine.at(-1)!.seq, hash: mine.at(-1)!.hash, records: mine.length });
    }

    const verified = await cli(db.url, ["audit:verify"]);
    expect(verified.stderr).toBe("");
    expect(verified.stdout).toMatch(new RegExp(`chain intact: ${all.length} records, in ${N} chains, Merkle root of the heads ${checkpoint.head}`));
    expect(verified.stdout).toMatch(/checkpoint #1 \(size \d+, .*\): matches/);
    expect(verified.status).toBe(0);

    const res = await fetch(`${app.base}/api/v1/audit/export?format=ndjson`, { headers: { authorization: `Bearer ${tokens.export}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    const lines = text.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines[0]).toEqual({ kind: "chains", chains: N });
    // The server signed the first one on its own; the one above is the latest.
    expect(lines.filter((l) => l.kind === "checkpoint").at(-1)).toMatchObject({ size: checkpoint.size, head: checkpoint.head });
    const file = path.join(tmp, "export.ndjson");
    writeFileSync(file, text);
    const fromFile = await cli(db.url, ["audit:verify", "--file", file]);
    expect(fromFile.stdout).toMatch(/checkpoint #2 .*: matches/);
    expect(fromFile.stderr).toBe("");
    expect(fromFile.status).toBe(0);

    // An edit in the file, in chain 2: found at that record.
    const inChain2 = lines.findIndex((l, i) => i > 40 && l.seq !== undefined && chainOf(l.operation_id, N) === 2);
    const edited = text.split("\n");
    edited[inChain2] = JSON.stringify({ ...lines[inChain2], actor: "mallory@example.test" });
    writeFileSync(file, edited.join("\n"));
    const bad = await cli(db.url, ["audit:verify", "--file", file]);
    expect(bad.stderr).toContain(`chain broken at seq ${lines[inChain2].seq}`);
    expect(bad.status).toBe(1);

    // The same export without its chains line is read as one chain: it cannot verify.
    writeFileSync(file, text.split("\n").slice(1).filter((l) => !l.includes('"checkpoint"')).join("\n"));
    expect((await cli(db.url, ["audit:verify", "--file", file])).status).toBe(1);

    // The last record of chain 3, rewritten in the database: the links before it still hold,
    // its own hash does not. (Found by the stored chain's check, which reads it in seq order.)
    const last3 = all.filter((r) => chainOf(r.operation_id, N) === 3).at(-1)!;
    await tamper(db.url, last3.seq);
    const broken = await cli(db.url, ["audit:verify"]);
    expect(broken.stderr).toContain(`chain broken at seq ${last3.seq}: hash does not match`);
    expect(broken.status).toBe(1);
  });
});

describe("a database made with one chain", () => {
  it("keeps one chain when the server is started with RECONCILE_CHAINS: the setting is ignored, with a warning", async () => {
    const one = await freshDatabase("one_chain");
    cleanup.push(one.drop);
    // Made with one chain, as every database before chains could be several.
    const t = (await prepareDatabase(one.url, "one-chain", { chains: 1 })).tokens;
    const server = await startApp(one.url, { env: { RECONCILE_CHAINS: "16" } });
    cleanup.push(() => server.stop());
    expect(server.output()).toMatch(/RECONCILE_CHAINS=16 is ignored: this database was created with 1 hash chain/);
    const records = Array.from({ length: 30 }, (_, i) => fullRecord(`one-${i}`, "one-run"));
    expect((await post(server, "/api/v1/receipts", t.ingest, { records })).status).toBe(200);
    expect((await one.query<{ chains: number }>("SELECT chains FROM chain_settings"))[0].chains).toBe(1);
    const all = await rows(one);
    expect(all.map((r) => r.seq)).toEqual(all.map((_, i) => i + 1));
    const v = await cli(one.url, ["audit:verify"]);
    expect(v.stdout).toMatch(/chain intact: \d+ records, head [0-9a-f]{64}/);
    expect(v.status).toBe(0);
    const signed = await cli(one.url, ["audit:checkpoint"]);
    expect(signed.stdout).toMatch(/^reconcile-checkpoint v1\n/);
    // Its export has no chains line: exactly the format of before.
    const res = await fetch(`${server.base}/api/v1/audit/export?format=ndjson`, { headers: { authorization: `Bearer ${t.export}` } });
    expect(JSON.parse((await res.text()).split("\n")[0]).seq).toBe(1);
  });
});
