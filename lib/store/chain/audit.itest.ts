import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { createCheckpoint } from "@/lib/domain/checkpoint";
import { call, ingest, principal, unique } from "@/lib/testing/integration";
import { runCliSync } from "@/lib/testing/cli";

let exportToken: string;
let ingestToken: string;
const tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-audit-"));

const cli = (args: string[], env: Record<string, string> = {}) => runCliSync(args, { CHECKPOINT_KEY_FILE: path.join(tmp, "key.pem"), ...env });

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
    // A chained record's line (checkpoints follow the records): the middle one of them.
    const recordLines = edited.flatMap((l, i) => (l && "seq" in JSON.parse(l) ? [i] : []));
    const k = recordLines[Math.floor(recordLines.length / 2)];
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

/** The fingerprint the CLI and the audit page show: SHA-256 of the SPKI DER, as hex. */
const fingerprintOf = (pem: string) => `sha256:${createHash("sha256").update(createPublicKey(pem).export({ format: "der", type: "spki" })).digest("hex")}`;
const publicPem = (privatePem: string) => createPublicKey(createPrivateKey(privatePem)).export({ format: "pem", type: "spki" }).toString();

describe("an export line is a checkpoint by its structure, never by text inside a payload", () => {
  it("a full export holding records whose payloads look like checkpoints still verifies", async () => {
    const id = unique("op-lookalike");
    const hostile = [
      { kind: "checkpoint" },
      { kind: "checkpoint", size: 1, head: "0".repeat(64), time: "2026-01-01T00:00:00Z", key: "ed25519:AAAA", signature: "AAAA" },
      [{ kind: "checkpoint" }],
      '{"kind":"checkpoint"}',
    ];
    expect((await ingest(ingestToken, { operation_id: id, intent: { effect: '{"kind":"checkpoint"}', params: { kind: "checkpoint" } }, receipt: { status: "accepted", observed_at: "2026-08-28T10:00:00Z", raw: hostile } })).status).toBe(201);
    // A real checkpoint, so that the export carries one.
    expect(cli(["audit:checkpoint"]).status).toBe(0);
    const res = await call("/api/v1/audit/export?format=ndjson", { token: exportToken });
    expect(res.text).toContain('"raw":[{"kind":"checkpoint"}');
    const file = path.join(tmp, "lookalike.ndjson");
    writeFileSync(file, res.text);
    const ok = cli(["audit:verify", "--file", file]);
    expect(ok.stderr).toBe("");
    expect(ok.stdout).toMatch(/chain intact/);
    expect(ok.stdout).toMatch(/checkpoint #\d+ \(size \d+, signed .* by key sha256:[0-9a-f]{64}\): matches/);
    expect(ok.status).toBe(0);

    // A line that is a checkpoint by structure but lacks its fields is a bad line, not ignored.
    appendFileSync(file, JSON.stringify({ kind: "checkpoint", size: "x" }) + "\n");
    const bad = cli(["audit:verify", "--file", file]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/is a checkpoint line without a size/);
  });
});

describe("audit:verify against a pinned key (--key, RECONCILE_CHECKPOINT_PUBLIC_KEY)", () => {
  const url = `file:${path.join(tmp, "pinned.db")}`;
  const keyFile = path.join(tmp, "pinned-signing.pem");
  const right = path.join(tmp, "right.pem");
  const wrong = path.join(tmp, "wrong.pem");
  const run = (args: string[], env: Record<string, string> = {}) => cli(args, { DATABASE_URL: url, CHECKPOINT_KEY_FILE: keyFile, ...env });

  beforeAll(() => {
    expect(run(["db:deploy"]).status).toBe(0);
    expect(run(["demo:load"]).status).toBe(0); // signs a checkpoint with keyFile, created at first use
    writeFileSync(right, publicPem(readFileSync(keyFile, "utf8")));
    writeFileSync(wrong, generateKeyPairSync("ed25519").publicKey.export({ format: "pem", type: "spki" }).toString());
  });

  it("the right key passes, any other key fails naming both fingerprints, and no key says what was not checked", () => {
    const real = fingerprintOf(readFileSync(right, "utf8"));
    const ok = run(["audit:verify", "--key", right]);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain(`signatures checked against the pinned key ${real}`);

    const refused = run(["audit:verify", "--key", wrong]);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(/chain intact/);
    expect(refused.stderr).toContain(`signed by key ${real}, not by the pinned key ${fingerprintOf(readFileSync(wrong, "utf8"))}`);

    const unpinned = run(["audit:verify"]);
    expect(unpinned.status).toBe(0);
    expect(unpinned.stdout).toContain(`signatures were checked only against the key each checkpoint carries (${real})`);

    // The environment variable takes the PEM text itself or a path; --key wins over it.
    expect(run(["audit:verify"], { RECONCILE_CHECKPOINT_PUBLIC_KEY: readFileSync(right, "utf8") }).status).toBe(0);
    expect(run(["audit:verify"], { RECONCILE_CHECKPOINT_PUBLIC_KEY: wrong }).status).toBe(1);
    expect(run(["audit:verify", "--key", right], { RECONCILE_CHECKPOINT_PUBLIC_KEY: wrong }).status).toBe(0);
    const missing = run(["audit:verify", "--key", path.join(tmp, "nope.pem")]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--key: no file/);
    writeFileSync(path.join(tmp, "garbage.pem"), "not a key");
    expect(run(["audit:verify", "--key", path.join(tmp, "garbage.pem")]).stderr).toMatch(/not a usable public key/);
  });

  it("a checkpoint a forger signed with a key of their own passes only when nothing is pinned; the same for an export file", () => {
    // More records (an export is a security event of the project's), then a checkpoint signed with another key.
    expect(run(["audit:export", "--format", "ndjson", "--out", path.join(tmp, `${unique("more")}.ndjson`)]).status).toBe(0);
    const forgerKey = path.join(tmp, "forger.pem");
    writeFileSync(forgerKey, generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString());
    expect(run(["audit:checkpoint"], { CHECKPOINT_KEY_FILE: forgerKey }).status).toBe(0);
    const forged = fingerprintOf(publicPem(readFileSync(forgerKey, "utf8")));
    expect(run(["audit:verify"]).status).toBe(0);
    const db = run(["audit:verify", "--key", right]);
    expect(db.status).toBe(1);
    expect(db.stderr).toContain(`signed by key ${forged}, not by the pinned key`);

    const file = path.join(tmp, "pinned.ndjson");
    expect(run(["audit:export", "--format", "ndjson", "--out", file]).status).toBe(0);
    const unpinned = run(["audit:verify", "--file", file]);
    expect(unpinned.status).toBe(0);
    expect(unpinned.stdout).toContain("signatures were checked only against the key each checkpoint carries");
    const pinned = run(["audit:verify", "--file", file, "--key", right]);
    expect(pinned.status).toBe(1);
    expect(pinned.stderr).toContain(`signed by key ${forged}, not by the pinned key`);

    // A forged checkpoint line appended to an honest export is caught the same way.
    const lines = readFileSync(file, "utf8").trim().split("\n");
    const records = lines.map((l) => JSON.parse(l)).filter((r) => "seq" in r);
    const last = records.at(-1);
    const fake = createCheckpoint(createPrivateKey(readFileSync(forgerKey, "utf8")), last.seq, last.hash);
    const honest = path.join(tmp, "appended.ndjson");
    writeFileSync(honest, lines.filter((l) => !JSON.parse(l).signature).join("\n") + "\n" + JSON.stringify({ kind: "checkpoint", ...fake }) + "\n");
    expect(run(["audit:verify", "--file", honest]).status).toBe(0);
    expect(run(["audit:verify", "--file", honest, "--key", right]).stderr).toContain(`signed by key ${forged}`);
  });
});
