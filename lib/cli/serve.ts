/**
 * The production server (`npm start` runs it after migrating): Next.js as a custom server
 * (https://nextjs.org/docs/app/guides/custom-server), with one route answered before Next's
 * router: POST /api/v1/receipts with a bearer token, by lib/api/ingest-node.ts, which runs the
 * same checks and the same ingest code as the route handler. Next.js's own request handling
 * costs about a millisecond a request here, which capped single-record ingest at ~700/s with a
 * p99 of ~170 ms at 50 connections; without it the same code serves ~3,000/s (BENCHMARKS.md).
 * Every other request, including ingest with a session cookie, is Next.js's.
 *
 * Environment: PORT (3000), HOSTNAME (all interfaces), DATABASE_URL, AUTH_SECRET,
 * KEEP_ALIVE_TIMEOUT_MS, RECONCILE_CHECKPOINT_EVERY (docs/AUDIT.md). Needs a build (`npm run build`).
 */
import { createServer } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import next from "next";
import { parseCheckpointEvery } from "@/lib/domain/checkpoint";

// Everything in this process is server code. `server-only` guards client bundles against
// server modules (Next.js resolves it per bundle); loaded here directly it would throw.
const require = createRequire(import.meta.url);
const serverOnly = require.resolve("server-only");
require.cache[serverOnly] = { id: serverOnly, filename: serverOnly, loaded: true, exports: {} } as NodeJS.Module;

async function main() {
  (process.env as Record<string, string>).NODE_ENV ??= "production";
  // A mistyped setting stops the start, instead of silently signing on the defaults.
  parseCheckpointEvery(process.env.RECONCILE_CHECKPOINT_EVERY);
  const port = Number(process.env.PORT || 3000);
  const hostname = process.env.HOSTNAME || undefined;
  const app = next({ dev: false, dir: path.resolve(import.meta.dirname, "../.."), hostname, port });
  const handle = app.getRequestHandler();
  await app.prepare();
  const { handleIngestNode, isFastIngest } = await import("@/lib/api/ingest-node");
  const server = createServer((req, res) => {
    if (isFastIngest(req)) void handleIngestNode(req, res);
    else void handle(req, res);
  });
  // `next start --keepAliveTimeout`: how long an idle keep-alive connection is kept (Node: 5 s).
  if (process.env.KEEP_ALIVE_TIMEOUT_MS) server.keepAliveTimeout = Number(process.env.KEEP_ALIVE_TIMEOUT_MS);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      server.close();
      void app.close().finally(() => process.exit(0));
      setTimeout(() => process.exit(0), 3000).unref();
    });
  }
  server.listen(port, hostname, () => console.log(`Reconcile is listening on http://${hostname ?? "localhost"}:${port}`));
}

main().catch((e) => {
  console.error(`could not start: ${e instanceof Error ? e.stack : e}`);
  process.exit(1);
});
