/**
 * The demo's MCP gateway (`npm run demo`): the example tool server (its social.publish posts to
 * the demo social service) behind `reconcile-gateway` on Streamable HTTP, recording as the demo
 * viewer, with a charge over 100 held for approval and social.publish answered with its verdict.
 * Its configuration is written to data/reconcile-gateway.json, so what the demo runs is there to
 * read and copy. `holdOneCall` is the demo's example agent making one call the gateway holds, so
 * the Approvals tab shows the feature from the start.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { loadConfig } from "../gateway/src/config";
import { startGateway } from "../gateway/src/server";

export async function startDemoGateway(opts: { appUrl: string; port: number; token: string; socialBase: string; file?: string }) {
  const file = path.resolve(opts.file ?? "data/reconcile-gateway.json");
  mkdirSync(path.dirname(file), { recursive: true });
  const config = {
    reconcile: { url: opts.appUrl, token_env: "RECONCILE_TOKEN" },
    listen: { http: { port: opts.port, host: "127.0.0.1" } },
    upstreams: { tools: { command: [process.execPath, "--import", "tsx", path.resolve("lib/gateway/examples/tools-server.ts")], cwd: process.cwd(), env: { SOCIAL_URL: opts.socialBase } } },
    tools: {
      // Answered with Reconcile's verdict: the demo's verifier reads the post back (it shows after ~4 s).
      "social.publish": { operation_id_from: "/request_id", receipt_id_from: "/id", await_verdict: "10s" },
      "billing.charge": { critical: true, operation_id_from: "/request_id", approval: { when: [{ pointer: "/amount", gt: 100 }], expires: "10m" } },
      "billing.slow": { timeout: "5s" },
      calls: { record: false },
    },
  };
  writeFileSync(file, JSON.stringify(config, null, 2) + "\n");
  return { file, running: await startGateway(loadConfig(file), { env: { ...process.env, RECONCILE_TOKEN: opts.token } }) };
}

/** The demo's example agent (the official MCP SDK client) sends one charge over 100: it waits in Review → Approvals. */
export async function holdOneCall(gatewayUrl: string): Promise<void> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const client = new Client({ name: "demo-example-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(gatewayUrl)));
  // Not awaited: the call waits for a reviewer (or expires); the demo goes on meanwhile.
  void client
    .callTool({ name: "billing.charge", arguments: { amount: 480, currency: "EUR", request_id: `demo-charge-${Date.now()}` } }, undefined, { timeout: 11 * 60_000 })
    .catch(() => undefined);
}

/**
 * Run on its own (`node --import tsx lib/cli/demo-gateway.ts`), the demo's gateway and example
 * agent against a running app: APP_URL, RECONCILE_TOKEN (the gateway's user), DEMO_GATEWAY_FILE
 * (where its configuration goes) and DEMO_GATEWAY_PORT (0: any free port). It prints
 * "held call sent through URL" once its agent's charge waits for approval (e2e/demo-held-call.spec.ts).
 */
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const env = process.env;
  startDemoGateway({ appUrl: env.APP_URL!, port: Number(env.DEMO_GATEWAY_PORT ?? 0), token: env.RECONCILE_TOKEN!, socialBase: env.SOCIAL_URL ?? "http://127.0.0.1:9", file: env.DEMO_GATEWAY_FILE })
    .then(async ({ running }) => {
      await holdOneCall(running.url!);
      console.log(`held call sent through ${running.url}`);
    })
    .catch((e) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    });
}
