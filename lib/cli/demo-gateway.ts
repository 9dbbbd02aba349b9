/**
 * The demo's MCP gateway (`npm run demo`): the example tool server (its social.publish posts to
 * the demo social service) behind `reconcile-gateway` on Streamable HTTP, recording as the demo
 * viewer, with a charge over 100 held for approval. Its configuration is written to
 * data/reconcile-gateway.json, so what the demo runs is there to read and copy.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { loadConfig } from "../gateway/src/config";
import { startGateway } from "../gateway/src/server";

export async function startDemoGateway(opts: { appUrl: string; port: number; token: string; socialBase: string }) {
  const file = path.resolve("data/reconcile-gateway.json");
  mkdirSync(path.dirname(file), { recursive: true });
  const config = {
    reconcile: { url: opts.appUrl, token_env: "RECONCILE_TOKEN" },
    listen: { http: { port: opts.port, host: "127.0.0.1" } },
    upstreams: { tools: { command: [process.execPath, "--import", "tsx", path.resolve("lib/gateway/examples/tools-server.ts")], cwd: process.cwd(), env: { SOCIAL_URL: opts.socialBase } } },
    tools: {
      "social.publish": { operation_id_from: "/request_id", receipt_id_from: "/id" },
      "billing.charge": { critical: true, operation_id_from: "/request_id", approval: { when: [{ pointer: "/amount", gt: 100 }], expires: "10m" } },
      "billing.slow": { timeout: "5s" },
      calls: { record: false },
    },
  };
  writeFileSync(file, JSON.stringify(config, null, 2) + "\n");
  return { file, running: await startGateway(loadConfig(file), { env: { ...process.env, RECONCILE_TOKEN: opts.token } }) };
}
