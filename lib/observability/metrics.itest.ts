/**
 * GET /metrics and the health routes on a production server of this file's own (so that every
 * counter moves only with this file's traffic), scraped and read as Prometheus reads them
 * (parse-prometheus-text-format). The registry is one per process: a record ingested through a
 * Next.js route handler (a session's ingest) and one through the server's fast path (a token's)
 * both show in the one scrape.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import parse, { type Family } from "parse-prometheus-text-format";
import Database from "better-sqlite3";
import { projectDatabaseUrl } from "@/lib/domain/projects";
import { prepareDatabase, startApp, type App } from "@/lib/reliability/harness";
import { freshDatabase, type FreshDatabase } from "@/lib/testing/own-server";
import { freePort } from "@/lib/testing/ports";
import { signInHttp } from "@/lib/testing/sessions";
import { WEBHOOK_TEST_ENV } from "@/lib/webhooks/testing/app";
import { startReceiver, type Receiver } from "@/lib/webhooks/testing/receiver";

let app: App;
let fresh: FreshDatabase;
let tokens: Awaited<ReturnType<typeof prepareDatabase>>["tokens"];
let metricsToken: string;
let scrapePort: number;
const before = process.env.DATABASE_URL;

beforeAll(async () => {
  fresh = await freshDatabase("metrics");
  const prepared = await prepareDatabase(fresh.url, "metrics");
  tokens = prepared.tokens;
  const { createApiToken } = await import("@/lib/store/people/api-tokens");
  metricsToken = (await createApiToken({ email: prepared.email, name: "prometheus", scopes: ["metrics"], actor: "itest" })).token;
  await (await import("@/lib/store/db/db")).disconnect();
  scrapePort = await freePort();
  app = await startApp(fresh.url, { env: { ...WEBHOOK_TEST_ENV, RECONCILE_METRICS_PORT: String(scrapePort), LOG_LEVEL: "info" } });
  receiver = await startReceiver();
  cookie = (await signInHttp(prepared.email, prepared.password, {}, app.base)).cookie!;
});

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
  if (before === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = before;
  await fresh?.drop();
});

let cookie: string;
let receiver: Receiver;

async function scrape(): Promise<{ text: string; families: Map<string, Family> }> {
  const res = await fetch(`${app.base}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, families: new Map(parse(text).map((f) => [f.name, f])) };
}

/** A counter's or gauge's value for these labels (0 when the series is absent). */
function value(s: { families: Map<string, Family> }, name: string, labels: Record<string, string> = {}): number {
  const f = s.families.get(name);
  const m = f?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  return m?.value === undefined ? 0 : Number(m.value);
}

/**
 * A histogram's count for these labels. Read off the `_count` lines: the parser folds the
 * buckets of a histogram with labels into one sample and drops its labels (it handles only
 * histograms without labels), so it checks the format and this reads the figures.
 */
function histogramCount(s: { text: string }, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of s.text.split("\n")) {
    const m = new RegExp(`^${name}_count\\{(.*)\\} (\\S+)$`).exec(line);
    if (!m) continue;
    const have = Object.fromEntries([...m[1].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total += Number(m[2]);
  }
  return total;
}

/**
 * Scrapes until `ready` holds of the scrape (at most `ms`): a request's time is recorded when its
 * last byte is handed to the socket, which can be just after the client has read the answer, and
 * webhook deliveries happen in the background.
 */
async function scrapeUntil(ready: (s: Awaited<ReturnType<typeof scrape>>) => boolean, ms = 5000): Promise<Awaited<ReturnType<typeof scrape>>> {
  const deadline = Date.now() + ms;
  let s = await scrape();
  while (!ready(s) && Date.now() < deadline) s = await scrape();
  return s;
}

const post = (path: string, body: unknown, headers: Record<string, string>) =>
  fetch(`${app.base}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const receipt = (id: string, status = "accepted") => ({ operation_id: id, receipt: { status, observed_at: "2026-08-28T10:00:00Z" } });

describe("GET /metrics", () => {
  it("counts ingest by outcome exactly, from the fast path and from a route handler alike", async () => {
    const s0 = await scrape();
    const t = { authorization: `Bearer ${tokens.ingest}` };
    // Token: the server's own fast path. A batch of 3 new operations; one re-sent (duplicate);
    // a new stage of a known one (appended); an invalid record (refused).
    const batch = await post("/api/v1/receipts", { records: [receipt("m-1"), receipt("m-2"), receipt("m-3")] }, t);
    expect(batch.status).toBe(200);
    expect((await post("/api/v1/receipts", receipt("m-1"), t)).status).toBe(200);
    expect((await post("/api/v1/receipts", { operation_id: "m-2", canonical_read: { status: "match", observed_at: "2026-08-28T10:01:00Z" } }, t)).status).toBe(200);
    expect((await post("/api/v1/receipts", { operation_id: "m-4" }, t)).status).toBe(422);
    // Session: Next.js's route handler, a bundle with its own copies of the modules.
    expect((await post("/api/v1/receipts", receipt("m-5"), { cookie, origin: app.base })).status).toBe(201);
    const ingests = (s: { text: string }) => histogramCount(s, "reconcile_ingest_request_seconds", { route: "/api/v1/receipts" });
    const s1 = await scrapeUntil((s) => ingests(s) - ingests(s0) >= 5);
    const delta = (outcome: string) => value(s1, "reconcile_ingest_records_total", { outcome, project: "default" }) - value(s0, "reconcile_ingest_records_total", { outcome, project: "default" });
    expect({ created: delta("created"), appended: delta("appended"), duplicate: delta("duplicate"), refused: delta("refused") }).toEqual({ created: 4, appended: 1, duplicate: 1, refused: 1 });
    expect(ingests(s1) - ingests(s0)).toBe(5);
    expect(s1.families.get("reconcile_ingest_request_seconds")?.type).toBe("HISTOGRAM");
    expect(value(s1, "reconcile_ingest_queue_records")).toBe(0);
    expect(value(s1, "reconcile_ingest_overloaded_total")).toBe(0);
  });

  it("shows a 4xx under its route template, and the chain's head as the database has it", async () => {
    const s0 = await scrape();
    const missing = await fetch(`${app.base}/api/v1/operations/no-such-op`, { headers: { authorization: `Bearer ${tokens.read}` } });
    expect(missing.status).toBe(404);
    const labels = { route: "/api/v1/operations/[operationId]", method: "GET", status: "404" };
    const notFound = (s: { text: string }) => histogramCount(s, "reconcile_http_request_seconds", labels);
    const s1 = await scrapeUntil((s) => notFound(s) > notFound(s0));
    expect(notFound(s1) - notFound(s0)).toBe(1);
    // No series per path a client makes up.
    expect(s1.text).not.toContain("no-such-op");
    const [head] = await fresh.query<{ seq: number | string }>("SELECT max(seq) AS seq FROM chain_records");
    expect(value(s1, "reconcile_chain_head_seq", { project: "default", chain: "0" })).toBe(Number(head.seq));
    expect(value(s1, "reconcile_database_bytes", { project: "default" })).toBeGreaterThan(0);
    expect(value(s1, "reconcile_project_readable", { project: "default" })).toBe(1);
    for (const name of ["process_cpu_user_seconds_total", "nodejs_heap_size_used_bytes", "reconcile_webhook_deliveries_total", "reconcile_verifier_checks_total", "reconcile_jobs_due", "reconcile_job_lag_seconds", "reconcile_checkpoint_age_seconds"]) {
      expect(s1.families.has(name), name).toBe(true);
    }
  });

  it("labels each project's figures with its slug, each read from its own database", async () => {
    const made = await post("/api/v1/projects", { slug: "metered", name: "Metered" }, { cookie, origin: app.base });
    expect(made.status).toBe(201);
    expect(await made.json()).toMatchObject({ slug: "metered", ready: true });
    const [{ id }] = await fresh.query<{ id: string }>("SELECT id FROM projects WHERE slug = 'metered'");
    const { createApiToken } = await import("@/lib/store/people/api-tokens");
    const { email } = (await fresh.query<{ email: string }>("SELECT email FROM users LIMIT 1"))[0];
    const token = (await createApiToken({ email, name: "metered ingest", scopes: ["ingest", "read"], project: id, actor: "itest" })).token;
    await (await import("@/lib/store/db/db")).disconnect();
    const s0 = await scrape();
    const t = { authorization: `Bearer ${token}` };
    expect((await post("/api/v1/receipts", { records: [receipt("p-1"), receipt("p-2")] }, t)).status).toBe(200);
    expect((await post("/api/v1/receipts", receipt("p-1"), t)).status).toBe(200);
    const created = (s: Awaited<ReturnType<typeof scrape>>, project: string) => value(s, "reconcile_ingest_records_total", { outcome: "created", project }) - value(s0, "reconcile_ingest_records_total", { outcome: "created", project });
    const s1 = await scrapeUntil((s) => created(s, "metered") >= 2);
    expect({ metered: created(s1, "metered"), default: created(s1, "default") }).toEqual({ metered: 2, default: 0 });
    expect(value(s1, "reconcile_ingest_records_total", { outcome: "duplicate", project: "metered" }) - value(s0, "reconcile_ingest_records_total", { outcome: "duplicate", project: "metered" })).toBe(1);
    // The new project's chain head is its own database's, not the default project's.
    const projectUrl = projectDatabaseUrl(fresh.url, id);
    const [head] = projectUrl.startsWith("file:")
      ? (() => {
          const db = new Database(projectUrl.slice("file:".length).split("?")[0], { readonly: true });
          try {
            return db.prepare("SELECT max(seq) AS seq FROM chain_records").all() as { seq: number }[];
          } finally {
            db.close();
          }
        })()
      : await fresh.query<{ seq: string }>(`SELECT max(seq) AS seq FROM "project_${id}".chain_records`);
    const [defaultHead] = await fresh.query<{ seq: number | string }>("SELECT max(seq) AS seq FROM chain_records");
    expect(Number(head.seq)).not.toBe(Number(defaultHead.seq));
    expect(value(s1, "reconcile_chain_head_seq", { project: "metered", chain: "0" })).toBe(Number(head.seq));
    expect(value(s1, "reconcile_chain_head_seq", { project: "default", chain: "0" })).toBe(Number(defaultHead.seq));
    expect(value(s1, "reconcile_database_bytes", { project: "metered" })).toBeGreaterThan(0);
    expect(value(s1, "reconcile_project_readable", { project: "metered" })).toBe(1);
  });

  it("counts webhook delivery attempts by result", async () => {
    const s0 = await scrape();
    receiver.answers.set("/flaky", (n) => ({ status: n === 0 ? 500 : 204 }));
    const session = { cookie, origin: app.base };
    for (const path of ["/ok", "/flaky"]) {
      const made = await post("/api/v1/webhooks", { url: receiver.url(path) }, session);
      expect(made.status).toBe(201);
      const { id } = (await made.json()) as { id: string };
      expect((await post(`/api/v1/webhooks/${id}/test`, {}, session)).status).toBeLessThan(300);
    }
    const attempts = (s: Awaited<ReturnType<typeof scrape>>, result: string) =>
      value(s, "reconcile_webhook_deliveries_total", { result, project: "default" }) - value(s0, "reconcile_webhook_deliveries_total", { result, project: "default" });
    const s1 = await scrapeUntil((s) => attempts(s, "delivered") >= 2, 15_000);
    expect({ delivered: attempts(s1, "delivered"), retry: attempts(s1, "retry"), failed: attempts(s1, "failed") }).toEqual({ delivered: 2, retry: 1, failed: 0 });
  });

  it("is refused without the metrics scope, and the loopback port answers without a token", async () => {
    const get = (token: string) => fetch(`${app.base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    const refused = await get(tokens.read);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/metrics scope/);
    expect((await get("rcl_" + "x".repeat(43))).status).toBe(401);
    const local = await fetch(`http://127.0.0.1:${scrapePort}/metrics`);
    expect(local.status).toBe(200);
    expect(parse(await local.text()).some((f) => f.name === "reconcile_ingest_records_total")).toBe(true);
    expect((await fetch(`http://127.0.0.1:${scrapePort}/api/v1/operations`)).status).toBe(404);
  });
});

describe("health, request ids and the request log", () => {
  it("live and ready answer, ready naming its checks", async () => {
    const live = await fetch(`${app.base}/api/health/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "ok" });
    const ready = await fetch(`${app.base}/api/health/ready`);
    const body = (await ready.json()) as { status: string; checks: { database: { ok: boolean }; migrations: { ok: boolean; applied: number; expected: number }; jobs: { ok: boolean; worker: string } } };
    expect(ready.status).toBe(200);
    expect(body.status).toBe("ok");
    expect(body.checks.database.ok).toBe(true);
    expect(body.checks.migrations).toMatchObject({ ok: true });
    expect(body.checks.migrations.applied).toBe(body.checks.migrations.expected);
    expect(body.checks.jobs).toMatchObject({ ok: true, worker: "running" });
  });

  it("an error answer carries the request id of its x-request-id header, and the log line says who without the token", async () => {
    const res = await fetch(`${app.base}/api/v1/operations/nothing-here`, { headers: { authorization: `Bearer ${tokens.read}` } });
    expect(res.status).toBe(404);
    const id = res.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(((await res.json()) as { error: { request_id: string } }).error.request_id).toBe(id);
    // The fast path's answers too, and a sane id sent by a proxy in front is kept.
    const fast = await post("/api/v1/receipts", { operation_id: "x" }, { authorization: `Bearer ${tokens.ingest}`, "x-request-id": "proxy-abc-123" });
    expect(fast.headers.get("x-request-id")).toBe("proxy-abc-123");
    expect(((await fast.json()) as { error: { request_id: string } }).error.request_id).toBe("proxy-abc-123");
    // A hostile one is replaced, never echoed.
    const hostile = await fetch(`${app.base}/api/health/live`, { headers: { "x-request-id": "a b<script>" } });
    expect(hostile.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);

    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = app
        .output()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.request_id === id);
      if (!line) await new Promise((r) => setTimeout(r, 20));
    }
    expect(line).toMatchObject({ msg: "request", method: "GET", route: "/api/v1/operations/[operationId]", status: 404, level: 30 });
    expect(typeof line!.duration_ms).toBe("number");
    expect(line!.principal_id).toEqual(expect.any(String));
    expect(app.output()).not.toContain(tokens.read);
    expect(app.output()).not.toContain(tokens.ingest);
  });
});
