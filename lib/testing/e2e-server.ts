/**
 * A server the e2e suite drives: a fresh SQLite database in a temporary folder (never a
 * developer's data), migrated, then the production server (lib/cli/serve.ts). Mode `demo`
 * loads the demo data and demo users; mode `empty` leaves the database without users (the
 * first-run path). The server's environment is this process's (a spec may start one with
 * AUTH_OIDC_* set, for instance). The demo server exports its verdicts (lib/verdicts/) to an
 * OTLP logs receiver this process runs, so the webhooks page shows the export at work.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEMO_USERS } from "@/lib/domain/demo-data";
import { disconnect } from "@/lib/store/db/db";
import { loadDemoData } from "@/lib/store/ingest/demo";
import { createUser } from "@/lib/store/people/users";
import { deployMigrations } from "../cli/schema-engine";
import { startServer } from "../cli/start";
import { startLogsReceiver } from "../verdicts/testing/otlp-logs-receiver";

async function main() {
  const [port = "3210", mode = "demo"] = process.argv.slice(2);
  // E2E_DATABASE_FILE: a spec that reads the database itself names the file.
  const file = process.env.E2E_DATABASE_FILE || path.join(mkdtempSync(path.join(os.tmpdir(), `reconcile-e2e-${mode}-`)), "e2e.db");
  const url = `file:${file}`;
  process.env.DATABASE_URL = url;
  await deployMigrations(url);
  if (mode === "demo") {
    const rx = await startLogsReceiver();
    Object.assign(process.env, { RECONCILE_VERDICT_OTLP_ENDPOINT: rx.url, RECONCILE_VERDICT_OTLP_HEADERS: "x-e2e=verdicts", RECONCILE_VERDICT_ALLOW_HTTP: "1", RECONCILE_VERDICT_ALLOW_PRIVATE: "1" });
    // An archive, so that a project's admin may set its retention (retention itself stays off
    // until one does: e2e/audit.spec.ts sets days no demo record is old enough for).
    process.env.RECONCILE_ARCHIVE_URL = `file://${path.join(path.dirname(file), "archive")}`;
    await loadDemoData();
    for (const u of DEMO_USERS) await createUser({ ...u, actor: "e2e", via: "demo" });
  }
  await disconnect();
  startServer({ ...process.env, DATABASE_URL: url, AUTH_SECRET: "e2e-secret-0123456789abcdef0123456789", HOSTNAME: "127.0.0.1", LOG_LEVEL: process.env.LOG_LEVEL ?? "warn" }, port);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
