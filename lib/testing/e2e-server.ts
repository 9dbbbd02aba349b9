/**
 * The server the e2e suite drives: a fresh SQLite database in a temporary folder (never a
 * developer's data), migrated and loaded with the demo data, then `next start`.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadDemoData } from "@/lib/store/demo";
import { disconnect } from "@/lib/store/db";
import { deployMigrations } from "../cli/schema-engine";
import { startServer } from "../cli/start";

async function main() {
  const port = process.argv[2] || "3210";
  const dir = mkdtempSync(path.join(os.tmpdir(), "reconcile-e2e-"));
  const url = `file:${path.join(dir, "e2e.db")}`;
  process.env.DATABASE_URL = url;
  await deployMigrations(url);
  await loadDemoData();
  await disconnect();
  startServer({ ...process.env, DATABASE_URL: url, AUTH_SECRET: "e2e-secret-0123456789abcdef0123456789", HOSTNAME: "127.0.0.1" }, port);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
