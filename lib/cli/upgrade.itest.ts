/**
 * Upgrades (issue 38, "Backups and upgrades, tested"): a database written by the previous tagged
 * release's own code (lib/testing/upgrade/<tag>.*, made by make-fixtures.sh from the tag: its
 * migrations, its demo data, an admin and a token from its command line) is upgraded by `npm
 * start` (lib/cli/start.ts: the migrations since, then the server), and then every page answers
 * for the admin, the API reads and writes with the release's token, and `audit:verify` passes,
 * the chain grown by the new write included. On SQLite, and on PostgreSQL when
 * INTEGRATION_DATABASE_URL names one (the release's pg_dump, restored into a new database).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { restoreDatabase } from "@/lib/store/db/backup";
import { adminQuery, dropTestDatabase } from "@/lib/testing/drop-database";
import { freePort } from "@/lib/testing/ports";
import { signInHttp } from "@/lib/testing/sessions";
import { runCli } from "@/lib/testing/cli";

const TAG = "v0.3.0";
const FIXTURES = path.resolve("lib/testing/upgrade");
const release = JSON.parse(readFileSync(path.join(FIXTURES, `${TAG}.json`), "utf8")) as { email: string; password: string; sqlite_token: string; postgresql_token: string };
const shared = inject("databaseUrl");
const onPostgres = !shared.startsWith("file:");
const token = onPostgres ? release.postgresql_token : release.sqlite_token;

const dir = mkdtempSync(path.join(os.tmpdir(), "reconcile-upgrade-"));
const pgName = `reconcile_upgrade_${process.pid}`;
let url: string;
let server: ChildProcess;
let base: string;
let log = "";

const cli = (args: string[]) => runCli(url, args);

beforeAll(async () => {
  if (onPostgres) {
    await adminQuery(shared, `CREATE DATABASE ${pgName}`);
    const u = new URL(shared);
    u.pathname = `/${pgName}`;
    url = u.toString();
    await restoreDatabase(path.join(FIXTURES, `${TAG}.pgdump`), url);
  } else {
    const file = path.join(dir, "release.db");
    writeFileSync(file, gunzipSync(readFileSync(path.join(FIXTURES, `${TAG}.sqlite.gz`))));
    url = `file:${file}`;
  }
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // `npm start`, as an operator runs it after pulling the new code.
  server = spawn(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "lib/cli/start.ts"], {
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), HOSTNAME: "127.0.0.1", NODE_ENV: "production", AUTH_SECRET: "upgrade-test-secret-0123456789abcdef", CHECKPOINT_KEY_FILE: path.join(dir, "key.pem") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  server.stdout!.on("data", (d) => (log += d));
  server.stderr!.on("data", (d) => (log += d));
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`npm start ended (${server.exitCode}):\n${log}`);
    try {
      if ((await fetch(`${base}/api/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`npm start did not answer within 90 s:\n${log}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}, 120_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const ended = new Promise((r) => server.once("exit", r));
    server.kill("SIGTERM");
    await ended;
  }
  if (onPostgres) await dropTestDatabase(shared, pgName);
  rmSync(dir, { recursive: true, force: true });
});

const api = async (p: string, body?: unknown) => {
  const res = await fetch(base + p, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
};

describe(`an upgrade from ${TAG}`, () => {
  it("npm start applies the migrations since the release, and the release's data reads, verifies and takes writes", async () => {
    expect(log).toMatch(/applied \d+ migration\(s\): .*verdict_exports/);

    const list = await api("/api/v1/operations?limit=200");
    expect(list.status, JSON.stringify(list.body).slice(0, 300)).toBe(200);
    expect(list.body.items.length).toBeGreaterThan(10);
    const first = list.body.items[0].operation_id as string;
    const one = await api(`/api/v1/operations/${encodeURIComponent(first)}`);
    expect(one.status).toBe(200);
    expect(one.body.stages.length).toBeGreaterThan(0);
    expect((await api("/api/v1/metrics")).status).toBe(200);

    // A write with the release's token, after the upgrade.
    const written = await api("/api/v1/receipts", { operation_id: `after-upgrade-${Date.now()}`, tool: { name: "social.publish" }, intent: { params: { text: "after" } }, receipt: { status: "accepted", receipt_id: "r-after", observed_at: new Date().toISOString() } });
    expect(written.status, JSON.stringify(written.body)).toBe(201);

    const verified = await cli(["audit:verify"]);
    expect(verified.status, `${verified.stdout}\n${verified.stderr}`).toBe(0);
    expect(verified.stdout).toMatch(/chain intact: \d+ records/);

    // The release's database is the project `default`, and its admin an admin of it: the instance's.
    const projects = await cli(["projects:list"]);
    expect(projects.stdout).toMatch(/^default\tDefault\tready/m);
    expect((await cli(["audit:verify", "--project", "default"])).status).toBe(0);
  });

  it("every page answers the release's admin", async () => {
    const signed = await signInHttp(release.email, release.password, {}, base);
    expect(signed.cookie, signed.location).toBeTruthy();
    const ops = (await api("/api/v1/operations?limit=1")).body.items;
    const op = ops[0];
    // The release's data is the default project's now: its pages are under /p/default (the old paths redirect there).
    const inDefault = (p: string) => `/p/default${p === "/" ? "" : p}`;
    const pages = [
      ...[
        "/",
        "/operations",
        `/operations/${encodeURIComponent(op.operation_id)}`,
        "/review",
        "/review/approvals",
        "/trajectories",
        ...(op.trajectory_id ? [`/trajectories/${encodeURIComponent(op.trajectory_id)}`] : []),
        "/metrics",
        "/audit",
        "/settings/tokens",
        "/settings/members",
        "/settings/verifiers",
        "/settings/webhooks",
      ].map(inDefault),
      "/settings/account",
      "/settings/users",
      "/settings/projects",
      "/settings/security",
    ];
    const old = await fetch(`${base}/operations`, { headers: { cookie: signed.cookie! }, redirect: "manual" });
    expect(old.status).toBe(308);
    expect(old.headers.get("location")).toMatch(/\/p\/default\/operations$/);
    for (const p of pages) {
      const res = await fetch(base + p, { headers: { cookie: signed.cookie! }, redirect: "manual" });
      const html = await res.text();
      expect(res.status, `${p}: ${html.slice(0, 200)}`).toBe(200);
      expect(html, p).not.toMatch(/Application error|Internal Server Error/);
    }
  });

  it("a backup of the release restores with today's command line, which says the server's start will upgrade it", async () => {
    let target: string;
    let from: string;
    const restoredName = `${pgName}_restored`;
    if (onPostgres) {
      await adminQuery(shared, `CREATE DATABASE ${restoredName}`);
      const u = new URL(shared);
      u.pathname = `/${restoredName}`;
      target = u.toString();
      from = path.join(FIXTURES, `${TAG}.pgdump`);
    } else {
      from = path.join(dir, "release-backup.db");
      writeFileSync(from, gunzipSync(readFileSync(path.join(FIXTURES, `${TAG}.sqlite.gz`))));
      target = `file:${path.join(dir, "restored.db")}`;
    }
    try {
      const r = await runCli(target, ["restore", "--from", from]);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^restored .*: \d+ records; head at seq \d+$/m);
      expect(r.stdout).toMatch(/the backup is of an older release \(it has no \w+ table\): npm start applies this release's migrations to it/);
    } finally {
      if (onPostgres) await dropTestDatabase(shared, restoredName);
    }
  });
});
