/**
 * The outcome at the boundary (issue 48), with real parts: the official MCP SDK client → the
 * gateway → the example tools server, whose posts live in local social services that Reconcile's
 * verifiers read back. The agent's answer carries the verdict: verified, divergent (an error),
 * not verified yet; reconcile_status tells it later; a read passes unrecorded; an idempotent
 * repeat is forwarded; a refused token stops the start.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { REASONS, RETRY_DECISIONS } from "@/lib/domain/outcomes";
import { startSocialService, socialVerifier, type SocialService } from "@/lib/verifiers/social-service";
import { api, startVerifierApp, until, type VerifierApp } from "@/lib/verifiers/testing/verifier-app";
import { ConfigError, parseConfig } from "./src/config";
import { startGateway, type RunningGateway } from "./src/server";

const UPSTREAM = [process.execPath, "--import", "tsx", path.resolve("lib/gateway/examples/tools-server.ts")];
let app: VerifierApp;
const social: Record<"fast" | "lost" | "slow" | "down", SocialService> = {} as never;
let gateway: RunningGateway;
let client: Client;
let n = 0;

const rules = {
  "fast.social.publish": { receipt_id_from: "/id", await_verdict: "10s" },
  "lost.social.publish": { receipt_id_from: "/id", await_verdict: "10s" },
  "slow.social.publish": { receipt_id_from: "/id", await_verdict: "1s" },
  "fast.billing.slow": { timeout: "300ms" },
  "down.social.publish": { receipt_id_from: "/id", await_verdict: "30s" },
};

beforeAll(async () => {
  // fast: a post is visible at once; lost: never (the tool said accepted, nothing was made); slow: after an hour.
  social.fast = await startSocialService({ visibleAfterMs: 0 });
  social.lost = await startSocialService({ visibleAfterMs: 3_600_000 });
  social.slow = await startSocialService({ visibleAfterMs: 3_600_000 });
  app = await startVerifierApp("gateway-outcome", { RECONCILE_VERIFIER_ALLOW_HTTP: "1", RECONCILE_VERIFIER_ALLOW_PRIVATE: "1", SOCIAL_READ_TOKEN: "read-token", RECONCILE_VERIFIER_ENV: "SOCIAL_READ_TOKEN" });
  // Each check right after the receipt (0s): lost's window ends there (absent: divergent); slow's stays open.
  for (const [name, pendingUntil] of [["fast", "1m"], ["lost", "0s"], ["slow", "5m"]] as const) {
    const saved = await api(app.app.base, app.token, "/api/v1/verifiers", socialVerifier(social[name].base, { name: `${name}-post`, tool: `${name}.social.publish`, checksAt: ["0s"], pendingUntil }));
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  }
  // down: the tool posts to a live service, but its verifier reads one that is gone (connection refused): every read unavailable.
  social.down = await startSocialService({ visibleAfterMs: 0 });
  const gone = await startSocialService();
  await gone.close();
  const unreadable = await api(app.app.base, app.token, "/api/v1/verifiers", socialVerifier(gone.base, { name: "down-post", tool: "down.social.publish", checksAt: ["0s"], pendingUntil: "0s" }));
  expect(unreadable.status, JSON.stringify(unreadable.body)).toBe(201);
  const config = parseConfig({
    reconcile: { url: app.app.base },
    listen: { http: { port: 0 } },
    upstreams: Object.fromEntries((["fast", "lost", "slow", "down"] as const).map((k) => [k, { command: UPSTREAM, env: { SOCIAL_URL: social[k].base } }])),
    tools: { ...rules, "*.calls": { record: false } },
    journal_dir: null,
  });
  gateway = await startGateway(config, { env: { ...process.env, RECONCILE_TOKEN: app.token }, log: () => undefined });
  client = new Client({ name: "outcome-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
}, 120_000);
afterAll(async () => {
  await client?.close();
  await gateway?.stop();
  await app?.stop();
  await Promise.allSettled(Object.values(social).map((s) => s.close()));
});

const callTool = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const texts = (r: CallToolResult) => (r.content as { type: string; text: string }[]).map((c) => c.text);
const meta = (r: CallToolResult) => r._meta?.["reconcile/outcome"] as { operation_id: string; outcome: string; reason: string; retry: string; link: string | null };
const operation = async (id: string) => (await api(app.app.base, app.token, `/api/v1/operations/${encodeURIComponent(id)}`)).body;
const counts = async (upstream: string) => (await callTool(`${upstream}.calls`, {})).structuredContent as Record<string, number>;
async function listed(tool: string): Promise<number> {
  return (await api(app.app.base, app.token, `/api/v1/operations?tool=${encodeURIComponent(tool)}&limit=200`)).body.items.length;
}

describe("answers with the verdict (await_verdict)", () => {
  it("verified: the tool's result and a line saying so, the outcome in _meta with the operation's page", async () => {
    const text = `verified ${++n}`;
    const r = await callTool("fast.social.publish", { text });
    expect(r.isError).toBeFalsy();
    expect(texts(r).at(-1)).toBe(`Reconcile: verified (${REASONS.verified})`);
    expect(r.structuredContent).toMatchObject({ id: expect.any(String) });
    const m = meta(r);
    expect(m).toMatchObject({ outcome: "verified", reason: REASONS.verified, retry: RETRY_DECISIONS.verified });
    expect(m.link).toBe(`${app.app.base}/p/default/operations/${encodeURIComponent(m.operation_id)}`);
    const op = await until("the attempt record", async () => {
      const o = await operation(m.operation_id);
      return o.attempts?.length ? o : undefined;
    });
    expect(op.effective_outcome).toBe("verified");
    // What the agent was told is on the operation's record.
    expect(op.attempts).toEqual([
      expect.objectContaining({ answer: "verdict", outcome: "verified", text: `Reconcile: verified (${REASONS.verified})`, session: expect.any(String), client: { name: "outcome-agent", version: "1.0.0" } }),
    ]);
    expect(op.stages.some((s: { stage: string; sent_by?: { name?: string } }) => s.stage === "canonical_read" && s.sent_by?.name?.startsWith("verifier:fast-post"))).toBe(true);
  });

  it("divergent: an error that starts with what the read found, the tool's own result kept in structuredContent", async () => {
    const r = await callTool("lost.social.publish", { text: `lost ${++n}` });
    expect(r.isError).toBe(true);
    expect(texts(r)[0]).toMatch(new RegExp(`^Reconcile: ${REASONS.absent}; the tool's answer was not borne out, so do not report it as done \\(operation `));
    expect(r.structuredContent).toMatchObject({ id: expect.any(String), url: expect.any(String) });
    expect(meta(r)).toMatchObject({ outcome: "divergent", reason: REASONS.absent });
    expect((await operation(meta(r).operation_id)).effective_outcome).toBe("divergent");
  });

  it("still uncertain when the wait ends: the tool's result and a line not to build on it", async () => {
    const started = Date.now();
    const r = await callTool("slow.social.publish", { text: `slow ${++n}` });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(r.isError).toBeFalsy();
    expect(texts(r).at(-1)).toMatch(new RegExp(`^Reconcile: not verified yet \\(${REASONS.windowOpen}\\); do not build on it — ask reconcile_status later`));
    expect(meta(r)).toMatchObject({ outcome: "uncertain", reason: REASONS.windowOpen });
  });
});

describe("a verifier whose last check could not read", () => {
  it("answers as soon as nothing more is scheduled to read it, not at the end of the wait", async () => {
    const started = Date.now();
    const r = await callTool("down.social.publish", { text: `down ${++n}` });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.isError).toBeFalsy();
    expect(texts(r).at(-1)).toMatch(new RegExp(`^Reconcile: not verified yet \\(${REASONS.readUnavailable}\\); do not build on it`));
    const op = await operation(meta(r).operation_id);
    expect(op.stages.filter((s: { stage: string }) => s.stage === "canonical_read").at(-1).payload.verifier).toMatchObject({ check: 1, of: 1 });
  });
});

describe("reconcile_status: the gateway's own tool", () => {
  it("is listed, and tells an operation's outcome by its id or by the earlier call's tool and arguments; it records nothing", async () => {
    const tools = (await client.listTools()).tools;
    const status = tools.find((t) => t.name === "reconcile_status");
    expect(status?.annotations).toMatchObject({ readOnlyHint: true });
    const text = `status ${++n}`;
    const first = await callTool("fast.social.publish", { text });
    const id = meta(first).operation_id;
    const before = await listed("fast.social.publish");
    const byId = await callTool("reconcile_status", { operation_id: id });
    expect(byId.isError).toBeFalsy();
    expect(texts(byId)[0]).toBe(`Reconcile: operation ${id} is verified (${REASONS.verified}); retry: ${RETRY_DECISIONS.verified}; ${meta(first).link}`);
    expect(byId.structuredContent).toEqual(meta(first));
    const byCall = await callTool("reconcile_status", { tool: "fast.social.publish", arguments: { text } });
    expect(byCall.structuredContent).toMatchObject({ operation_id: id, outcome: "verified" });
    expect(await listed("fast.social.publish")).toBe(before);
    expect(await listed("reconcile_status")).toBe(0);
  });

  it("refuses clearly, naming the field: an unknown operation (or another project's), a bad id, a call it never saw", async () => {
    const unknown = await callTool("reconcile_status", { operation_id: "no-such-operation" });
    expect(unknown.isError).toBe(true);
    expect(texts(unknown)[0]).toBe("operation_id: Reconcile has no operation no-such-operation that this gateway's token can read");
    const dots = await callTool("reconcile_status", { operation_id: ".." });
    expect(texts(dots)[0]).toBe("operation_id must not be . or .. (a URL reads those as a step of its path)");
    const never = await callTool("reconcile_status", { tool: "fast.social.publish", arguments: { text: "never sent" } });
    expect(texts(never)[0]).toMatch(/^tool: this gateway knows no earlier call of fast\.social\.publish with these arguments/);
    const nothing = await callTool("reconcile_status", {});
    expect(texts(nothing)[0]).toMatch(/^send \{"operation_id"/);
  });
});

describe("reads pass, idempotent repeats are forwarded, writes are gated", () => {
  it("a read (the upstream's readOnlyHint) is forwarded every time and recorded nowhere", async () => {
    const before = (await counts("fast"))["social.read"] ?? 0;
    const { id } = social.fast.publish(`to read ${++n}`);
    for (let i = 0; i < 2; i++) {
      const r = await callTool("fast.social.read", { id });
      expect(r.isError).toBeFalsy();
      expect(texts(r)[0]).toContain(`to read ${n}`);
      expect(meta(r)).toBeUndefined();
    }
    expect((await counts("fast"))["social.read"]).toBe(before + 2);
    expect(await listed("fast.social.read")).toBe(0);
  });

  it("an idempotent tool's repeat (idempotentHint) is forwarded as a new attempt, and its uncertainty is not queued for review", async () => {
    const before = (await counts("fast"))["profile.set_name"] ?? 0;
    const name = `name ${++n}`;
    const first = await callTool("fast.profile.set_name", { name });
    const again = await callTool("fast.profile.set_name", { name });
    expect(again.isError).toBeFalsy();
    expect((await counts("fast"))["profile.set_name"]).toBe(before + 2);
    expect(meta(again).operation_id).toBe(`${meta(first).operation_id}~2`);
    expect(meta(again).retry).toBe(RETRY_DECISIONS.idempotent);
    await gateway.reconcile.flush();
    const op = await operation(meta(again).operation_id);
    expect(op).toMatchObject({ effective_outcome: "uncertain", needs_review: false, retry: { decision: RETRY_DECISIONS.idempotent } });
    expect(op.stages[0].envelope.kind).toBe("idempotent");
  });

  it("a write's repeat is still refused while it is uncertain", async () => {
    const text = `gated ${++n}`;
    const r = await callTool("slow.social.publish", { text });
    const again = await callTool("slow.social.publish", { text });
    expect(again.isError).toBe(true);
    expect(texts(again)[0]).toMatch(/^not sent again: the earlier slow\.social\.publish call is still being verified/);
    expect(meta(again)).toMatchObject({ operation_id: meta(r).operation_id, outcome: "uncertain" });
    // Both the answer with the verdict and the refused repeat are on the record, in order.
    const op = await until("two attempt records", async () => {
      const o = await operation(meta(r).operation_id);
      return o.attempts?.length >= 2 ? o : undefined;
    });
    expect(op.attempts.map((a: { answer: string }) => a.answer)).toEqual(["verdict", "refused"]);
    expect(op.attempts[1].text).toBe(texts(again)[0]);
  });

  it("a call whose fate is unknown says on its record what happened: the upstream did not answer in time", async () => {
    const r = await callTool("fast.billing.slow", { ms: 5_000 });
    expect(r.isError).toBe(true);
    expect(meta(r)).toMatchObject({ outcome: "uncertain" });
    const op = await until("the attempt record", async () => {
      const o = await operation(meta(r).operation_id);
      return o.attempts?.length ? o : undefined;
    });
    expect(op.stages.map((s: { stage: string }) => s.stage)).toEqual(["intent"]);
    expect(op.attempts).toEqual([expect.objectContaining({ answer: "fate_unknown", outcome: "uncertain", text: "the upstream fast did not answer within 300 ms: whether billing.slow took effect is unknown" })]);
  });
});

describe("the token is checked at start", () => {
  const config = () => parseConfig({ reconcile: { url: app.app.base }, listen: { http: { port: 0 } }, upstreams: { fast: { command: UPSTREAM } }, journal_dir: null });
  it("a token Reconcile does not know stops the start, saying so (and Reconcile says it was the token)", async () => {
    const start = startGateway(config(), { env: { ...process.env, RECONCILE_TOKEN: "rcl_" + "x".repeat(43) }, log: () => undefined });
    await expect(start).rejects.toBeInstanceOf(ConfigError);
    await expect(start).rejects.toThrow("Reconcile refused the token in RECONCILE_TOKEN (401): the bearer token is unknown, expired or revoked: create a new one under Settings, Tokens");
  });
});
