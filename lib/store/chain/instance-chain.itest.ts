/**
 * The instance's own security trail (docs/AUDIT.md "The instance's security
 * trail"): sign-in, users, tokens, projects and members go to instance_events, never to a
 * project's chain; it is append-only on both databases; the API and the command line export it
 * whole, and `audit:verify --file` and `audit:verify --instance` check it, naming a broken seq.
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { call, db, principal, unique } from "@/lib/testing/integration";
import { signInHttp } from "@/lib/testing/sessions";
import { deployMigrations } from "@/lib/cli/schema-engine";
import { runCliSync } from "@/lib/testing/cli";

const tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-trail-"));

const cli = (args: string[], env: Record<string, string> = {}) => runCliSync(args, { CHECKPOINT_KEY_FILE: path.join(tmp, "key.pem"), ...env });

const lines = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

let instanceAdmin: { email: string; token: string };

beforeAll(async () => {
  instanceAdmin = await principal("admin", ["admin"]);
});

describe("the instance's security trail, on the server's database", () => {
  it("a new user, their token and their sign-in are in it, not in the project's chain", async () => {
    const viewer = await principal("viewer", ["read"]);
    expect((await signInHttp(viewer.email, "integration-password")).cookie).toBeTruthy();
    const d = await db();
    const mine = (await d.instanceEvent.findMany({ where: { payload: { contains: viewer.email } }, orderBy: { seq: "asc" } })).map((e) => JSON.parse(e.payload).type);
    expect(mine).toEqual(["user.created", "token.created", "signin.succeeded"]);
    expect(await d.chainRecord.count({ where: { payload: { contains: viewer.email } } })).toBe(0);
  });

  it("GET /api/v1/security-events streams the whole trail, which audit:verify --file accepts; the download is on it", async () => {
    // The server signs the trail's first checkpoint within seconds of its first event (its watch of the projects).
    await expect.poll(async () => (await db()).instanceCheckpoint.count(), { timeout: 15_000 }).toBeGreaterThan(0);
    const res = await call("/api/v1/security-events", { token: instanceAdmin.token });
    expect(res.status, res.text).toBe(200);
    const records = lines(res.text).filter((l) => "seq" in l);
    expect(records[0]).toMatchObject({ seq: 1, kind: "security", operation_id: null, prev_hash: "0".repeat(64) });
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
    expect(records.at(-1)).toMatchObject({ actor: instanceAdmin.email, payload: { type: "audit.exported", filter: { trail: "instance" } } });
    const file = path.join(tmp, `trail-${unique("f")}.ndjson`);
    writeFileSync(file, res.text);
    const ok = cli(["audit:verify", "--file", file]);
    expect(ok.stdout, ok.stderr).toMatch(new RegExp(`chain intact: ${records.length} records`));

    // That checkpoint rides after the records, and matches.
    expect(ok.stdout).toMatch(/checkpoint #1 \(size \d+, .*\): matches/);

    // An edit anywhere is caught and located.
    const edited = res.text.trim().split("\n");
    const k = Math.floor(records.length / 2);
    edited[k] = JSON.stringify({ ...JSON.parse(edited[k]), actor: "mallory@example.test" });
    writeFileSync(file, edited.join("\n"));
    const bad = cli(["audit:verify", "--file", file]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(`chain broken at seq ${k + 1}`);
  });

  it("only instance admins read it: a project's own admin, a viewer and an instance admin's token without the admin scope are refused", async () => {
    const viewer = await principal("viewer", ["read", "export"]);
    expect((await call("/api/v1/security-events", { token: viewer.token })).status).toBe(403);
    // A refusal of an instance permission is the instance's event, in its trail, not in the project's chain.
    const refusals = (await (await db()).instanceEvent.findMany({ where: { actor: viewer.email } })).map((e) => JSON.parse(e.payload));
    expect(refusals).toEqual(expect.arrayContaining([expect.objectContaining({ type: "authorization.refused", permission: "instance:audit", path: "/api/v1/security-events" })]));
    expect(await (await db()).chainRecord.count({ where: { actor: viewer.email } })).toBe(0);
    const exportOnly = await principal("admin", ["read", "export"]);
    const refusedToken = await call("/api/v1/security-events", { token: exportOnly.token });
    expect(refusedToken.status).toBe(403);
    expect(refusedToken.body.error.message).toMatch(/admin/);
    expect((await call("/api/v1/security-events")).status).toBe(401);
    const slug = unique("trail").toLowerCase();
    const creator = await principal("admin", ["admin"]);
    expect((await call("/api/v1/projects", { token: creator.token, body: { slug, name: "Trail" } })).status).toBe(201);
    const { createApiToken } = await import("@/lib/store/people/api-tokens");
    const { projectBySlug } = await import("@/lib/store/people/projects");
    const outsider = await principal("viewer", ["read"]);
    const projectId = (await projectBySlug(slug))!.id;
    expect((await call(`/api/v1/projects/${slug}/members`, { token: (await createApiToken({ email: creator.email, name: "t", scopes: ["admin"], project: projectId, actor: "itest" })).token, body: { email: outsider.email, role: "admin" } })).status).toBe(200);
    const projectAdmin = await createApiToken({ email: outsider.email, name: "t", scopes: ["read", "admin"], project: projectId, actor: "itest" });
    const refused = await call("/api/v1/security-events", { token: projectAdmin.token });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/instance admin/);
    // The trail names the project's creation and its new member.
    const trail = lines((await call("/api/v1/security-events", { token: instanceAdmin.token })).text);
    expect(trail.filter((r) => r.payload?.type === "project.created" && r.payload?.project === slug)).toHaveLength(1);
    expect(trail.filter((r) => r.payload?.type === "member.set" && r.payload?.email === outsider.email)).toHaveLength(1);
  });

  it("refuses parameters it does not know with 400, and writes nothing", async () => {
    const before = await (await db()).instanceEvent.count();
    for (const q of ["format=csv", "since=2026-01-01T00:00:00Z", "x=1", "format=ndjson&format=json"]) {
      const r = await call(`/api/v1/security-events?${q}`, { token: instanceAdmin.token });
      expect(r.status, q).toBe(400);
    }
    expect(await (await db()).instanceEvent.count()).toBe(before);
  });

  it("is append-only: UPDATE, DELETE (and TRUNCATE on PostgreSQL) are refused", async () => {
    const d = await db();
    const postgres = process.env.DATABASE_URL!.startsWith("postgres");
    const attempts = ["UPDATE instance_events SET actor = 'mallory' WHERE seq = 1", "DELETE FROM instance_events WHERE seq = 1", ...(postgres ? ["TRUNCATE instance_events"] : [])];
    for (const sql of attempts) await expect(d.$executeRawUnsafe(sql), sql).rejects.toThrow(/instance_events is append-only/);
    expect(await d.instanceEvent.count({ where: { seq: 1 } })).toBe(1);
  });

  it("audit:verify --instance walks it on the server's database", () => {
    const r = cli(["audit:verify", "--instance"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/the instance's security trail is intact: [\d,]+ records, head [0-9a-f]{64}/);
  });
});

describe("the trail on a database of the command line's (triggers dropped for the tamper test)", () => {
  it("users:add and tokens:add write to it; a checkpoint signs it; export and verify agree; an edit, a cut tail or a gap is named", async () => {
    const file = path.join(tmp, "trail.db");
    const env = { DATABASE_URL: `file:${file}` };
    await deployMigrations(env.DATABASE_URL);
    expect(cli(["users:add", "--email", "u0@trail.example", "--password", "a-long-password", "--role", "viewer"], env).status).toBe(0);
    expect(cli(["tokens:add", "--email", "u0@trail.example", "--scopes", "read", "--name", "n"], env).status).toBe(0);
    const signed = cli(["audit:checkpoint", "--instance"], env);
    expect(signed.status, signed.stderr).toBe(0);
    expect(signed.stdout).toMatch(/size: 2\n/);
    const out = path.join(tmp, "cli-trail.ndjson");
    const exported = cli(["audit:export", "--instance", "--out", out], env);
    expect(exported.status, exported.stderr).toBe(0);
    const written = lines(readFileSync(out, "utf8"));
    expect(written.map((r) => r.payload?.type ?? r.kind)).toEqual(["user.created", "token.created", "audit.exported", "checkpoint"]);
    const fromFile = cli(["audit:verify", "--file", out], env);
    expect(fromFile.stdout).toMatch(/chain intact: 3 records/);
    expect(fromFile.stdout).toMatch(/checkpoint #1 \(size 2, .*\): matches/);
    const stored = cli(["audit:verify", "--instance"], env);
    expect(stored.status, stored.stderr).toBe(0);
    expect(stored.stdout).toMatch(/intact: 3 records/);
    expect(stored.stdout).toMatch(/checkpoint #1 \(size 2, .*\): matches/);
    const wrongKey = path.join(tmp, "wrong.pem");
    writeFileSync(wrongKey, generateKeyPairSync("ed25519").publicKey.export({ format: "pem", type: "spki" }).toString());
    const pinned = cli(["audit:verify", "--instance", "--key", wrongKey], env);
    expect(pinned.status).toBe(1);
    expect(pinned.stderr).toMatch(/not by the pinned key/);
    expect(cli(["audit:verify", "--instance", "--since", "x"], env).status).toBe(2);

    const sqlite = new Database(file);
    // The project's chain holds none of it (nothing of people is a project's).
    expect(sqlite.prepare("SELECT count(*) AS n FROM chain_records").get()).toEqual({ n: 0 });
    expect(() => sqlite.prepare("UPDATE instance_events SET actor = 'mallory' WHERE seq = 2").run()).toThrow(/append-only/);
    expect(() => sqlite.prepare("DELETE FROM instance_checkpoints").run()).toThrow(/append-only/);
    sqlite.exec("DROP TRIGGER instance_events_no_update; DROP TRIGGER instance_events_no_delete;");
    sqlite.prepare("UPDATE instance_events SET actor = 'mallory' WHERE seq = 2").run();
    const edited = cli(["audit:verify", "--instance"], env);
    expect(edited.status).toBe(1);
    expect(edited.stderr).toContain("broken at seq 2: hash does not match");
    // Cut the tail (the edited record with it): every remaining link holds, the signed checkpoint does not.
    sqlite.prepare("DELETE FROM instance_events WHERE seq >= 2").run();
    const cut = cli(["audit:verify", "--instance"], env);
    expect(cut.stdout).toMatch(/intact: 1 records/);
    expect(cut.status).toBe(1);
    expect(cut.stderr).toMatch(/truncated: the chain ends at seq 1, but a checkpoint .* covers 2 records/);
    // A record taken out of the middle breaks the links.
    sqlite.prepare("DELETE FROM instance_events WHERE seq = 1").run();
    sqlite.prepare("INSERT INTO instance_events (seq, recorded_at, actor, payload, prev_hash, hash) VALUES (2, 'x', NULL, '{}', 'y', 'z')").run();
    sqlite.close();
    const gap = cli(["audit:verify", "--instance"], env);
    expect(gap.status).toBe(1);
    expect(gap.stderr).toContain("broken at seq 1: seq 1 is missing (found 2)");
  });
});
