/**
 * Verifiers keep working behind the gateway (issue 40 part 1): a receipt that arrives through the
 * gateway schedules its tool's verifier like any other, and Reconcile's own read decides.
 */
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startSocialService, socialVerifier, type SocialService } from "@/lib/verifiers/social-service";
import { api, startVerifierApp, until, type VerifierApp } from "@/lib/verifiers/testing/verifier-app";
import { parseConfig } from "./src/config";
import { startGateway, type RunningGateway } from "./src/server";

let app: VerifierApp;
let social: SocialService;
let gateway: RunningGateway;
beforeAll(async () => {
  social = await startSocialService({ visibleAfterMs: 600 });
  app = await startVerifierApp("gateway-verifier", { RECONCILE_VERIFIER_ALLOW_HTTP: "1", RECONCILE_VERIFIER_ALLOW_PRIVATE: "1", SOCIAL_READ_TOKEN: "read-token", RECONCILE_VERIFIER_ENV: "SOCIAL_READ_TOKEN" });
});
afterAll(async () => {
  await gateway?.stop();
  await app?.stop();
  await social?.close();
});

it("a receipt through the gateway is read back by the tool's verifier", async () => {
  const saved = await api(app.app.base, app.token, "/api/v1/verifiers", socialVerifier(social.base, { name: "gateway-publish", tool: "social.publish", checksAt: ["200ms", "1s", "2s"], pendingUntil: "4s" }));
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  const config = parseConfig({
    reconcile: { url: app.app.base },
    listen: { http: { port: 0 } },
    upstreams: { social: { command: [process.execPath, "--import", "tsx", path.resolve("lib/gateway/examples/tools-server.ts")], env: { SOCIAL_URL: social.base } } },
    tools: { "social.publish": { operation_id_from: "/request_id", receipt_id_from: "/id" } },
    journal_dir: null,
  });
  gateway = await startGateway(config, { env: { ...process.env, RECONCILE_TOKEN: app.token }, log: () => undefined });
  const client = new Client({ name: "verifier-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
  const requestId = `post-${Date.now()}`;
  const result = (await client.callTool({ name: "social.publish", arguments: { text: "through the gateway", request_id: requestId } })) as unknown as { structuredContent: { id: string } };
  await gateway.reconcile.flush();
  const op = await until("the verifier's read", async () => {
    const body = (await api(app.app.base, app.token, `/api/v1/operations/${requestId}`)).body;
    return body?.effective_outcome === "verified" ? body : undefined;
  });
  expect(op.stages.find((s: { stage: string }) => s.stage === "receipt").payload.receipt_id).toBe(result.structuredContent.id);
  const read = op.stages.filter((s: { stage: string; sent_by: { name?: string } }) => s.stage === "canonical_read" && s.sent_by.name?.startsWith("verifier:gateway-publish"));
  expect(read.length).toBeGreaterThan(0);
  await client.close();
});
