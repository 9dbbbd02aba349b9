import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { call, ingest, principal, unique } from "@/lib/testing/integration";

let exportToken: string;
let ingestToken: string;
const tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-audit-"));

function cli(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "--conditions=react-server", "lib/cli/index.ts", ...args], {
    env: { ...process.env, CHECKPOINT_KEY_FILE: path.join(tmp, "key.pem"), ...env },
    encoding: "utf8",
  });
}

beforeAll(async () => {
  exportToken = (await principal("viewer", ["export"])).token;
  ingestToken = (await principal("reviewer", ["ingest", "verify", "read"])).token;
});

describe("GET /api/v1/audit/export", () => {
  it("streams NDJSON that audit:verify accepts, and records the export itself", async () => {
    await ingest(ingestToken, { operation_id: unique("op-audit"), receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } });
    const res = await call("/api/v1/audit/export?format=ndjson", { token: exportToken });
    expect(res.status).toBe(200);
    const lines = res.text.trim().split("\n").map((l) => JSON.parse(l));
    expect(Object.keys(lines[0]).sort()).toEqual(["actor", "hash", "kind", "operation_id", "payload", "prev_hash", "recorded_at", "seq"]);
    const exported = lines.filter((l) => l.kind === "security" && l.payload.type === "audit.exported");
    expect(exported.at(-1)?.payload).toMatchObject({ format: "ndjson", filter: {} });
    const file = path.join(tmp, "export.ndjson");
    writeFileSync(file, res.text);
    const ok = cli(["audit:verify", "--file", file]);
    expect(ok.stdout).toMatch(/chain intact/);
    expect(ok.status).toBe(0);

    // An edit anywhere in the file is caught and located.
    const edited = res.text.split("\n");
    const k = Math.floor(edited.length / 2);
    const record = JSON.parse(edited[k]);
    edited[k] = JSON.stringify({ ...record, actor: "mallory@example.test" });
    writeFileSync(file, edited.join("\n"));
    const bad = cli(["audit:verify", "--file", file]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain(`chain broken at seq ${record.seq}`);

    // A number no double can hold (JSON.parse reads 1e999 as Infinity, which has no canonical
    // form) is a broken record at its seq, not a crash of the verifier.
    edited[k] = JSON.stringify({ ...record, payload: "<n>" }).replace('"<n>"', "1e999");
    writeFileSync(file, edited.join("\n"));
    const unhashable = cli(["audit:verify", "--file", file]);
    expect(unhashable.status).toBe(1);
    expect(unhashable.stderr).toContain(`chain broken at seq ${record.seq}`);
  });

  it("a filtered export verifies as a subset", async () => {
    const id = unique("op-subset");
    await ingest(ingestToken, { operation_id: id, receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z" } });
    await ingest(ingestToken, { operation_id: id, canonical_read: { status: "absent", observed_at: "2026-08-28T10:05:00Z" } });
    const res = await call(`/api/v1/audit/export?format=ndjson&operation_id=${id}`, { token: exportToken });
    const records = res.text.trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.kind !== "checkpoint");
    expect(records.map((r) => r.operation_id)).toEqual([id, id]);
    const file = path.join(tmp, "subset.ndjson");
    writeFileSync(file, res.text);
    expect(cli(["audit:verify", "--file", file, "--subset"]).status).toBe(0);
    expect(cli(["audit:verify", "--file", file]).stderr).toMatch(/seq 1 is missing/);
  });

  it("CSV follows RFC 4180 and makes formulas inert; JSON is one document", async () => {
    const id = `=HYPERLINK(1)-${unique("x")}`;
    expect((await ingest(ingestToken, { operation_id: id, intent: { effect: "x" } })).status).toBe(201);
    const csv = await call(`/api/v1/audit/export?format=csv&operation_id=${encodeURIComponent(id)}`, { token: exportToken });
    expect(csv.status).toBe(200);
    const [header, row] = csv.text.split("\r\n").length > 1 ? csv.text.split("\r\n") : csv.text.split("\n");
    expect(header).toBe("seq,kind,operation_id,recorded_at,actor,payload,prev_hash,hash");
    expect(row).toContain(`,'${id},`);
    const json = await call(`/api/v1/audit/export?format=json&operation_id=${encodeURIComponent(id)}`, { token: exportToken });
    expect(json.body.records).toHaveLength(1);
    expect(Array.isArray(json.body.checkpoints)).toBe(true);
  });

  it("needs the export scope, and refuses bad filters with 400", async () => {
    expect((await call("/api/v1/audit/export", { token: ingestToken })).status).toBe(403);
    expect((await call("/api/v1/audit/export")).status).toBe(401);
    expect((await call("/api/v1/audit/export?format=xml", { token: exportToken })).status).toBe(400);
    expect((await call("/api/v1/audit/export?since=yesterday", { token: exportToken })).status).toBe(400);
  });
});

describe("tampering with the database itself (triggers dropped for the test)", () => {
  it("audit:verify names the first bad seq; a checkpoint kept elsewhere catches truncation", () => {
    const url = `file:${path.join(tmp, "tamper.db")}`;
    expect(cli(["db:deploy"], { DATABASE_URL: url }).status).toBe(0);
    expect(cli(["demo:load"], { DATABASE_URL: url }).status).toBe(0);
    const cp = cli(["audit:checkpoint"], { DATABASE_URL: url });
    expect(cp.status).toBe(0);
    const cpFile = path.join(tmp, "checkpoint.txt");
    writeFileSync(cpFile, cp.stdout);
    expect(cli(["audit:verify", "--checkpoint", cpFile], { DATABASE_URL: url }).status).toBe(0);

    const db = new Database(url.slice("file:".length));
    db.exec("DROP TRIGGER chain_records_no_update; DROP TRIGGER chain_records_no_delete;");
    db.prepare("UPDATE chain_records SET actor = 'mallory' WHERE seq = 42").run();
    db.close();
    const edited = cli(["audit:verify"], { DATABASE_URL: url });
    expect(edited.status).not.toBe(0);
    expect(edited.stderr).toContain("chain broken at seq 42");

    // Put it back, then cut the tail: every remaining link is valid, the checkpoint is not.
    const db2 = new Database(url.slice("file:".length));
    db2.prepare("UPDATE chain_records SET actor = 'demo' WHERE seq = 42").run();
    const size = Number(/size: (\d+)/.exec(readFileSync(cpFile, "utf8"))![1]);
    db2.prepare("DELETE FROM chain_records WHERE seq > ?").run(size - 5);
    db2.close();
    const truncated = cli(["audit:verify", "--checkpoint", cpFile], { DATABASE_URL: url });
    expect(truncated.stdout).toMatch(/chain intact/);
    expect(truncated.status).not.toBe(0);
    expect(truncated.stderr).toMatch(/truncated/);
  });
});
