import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, type StdioServerParameters } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";
import { installOffline } from "@/lib/testing/offline-install";
import { packPackages, type Packed } from "@/lib/cli/pack-packages";

/**
 * The gateway as a user installs it (issue 49 item 7): both packages built with tsc and packed
 * with `npm pack`, the two tarballs installed into an empty folder outside the checkout, and the
 * installed `reconcile-gateway` started by the official MCP SDK client the way an MCP client's
 * configuration starts it (command, args, env: the snippet in lib/gateway/README.md), recording
 * into the real server. Only its upstream, the project's example tool server, runs from the
 * checkout (through tsx); the gateway runs on plain Node from the folder.
 */
const CHECKOUT = process.cwd();
const UPSTREAM = path.resolve("lib/gateway/examples/tools-server.ts");

let agent: { email: string; token: string };
let work: string;
let app: string;
let config: string;
let packed: { client: Packed; gateway: Packed };
const clients: Client[] = [];

beforeAll(async () => {
  agent = await principal("viewer", ["ingest", "read"]);
  work = mkdtempSync(path.join(tmpdir(), "gw-installed-"));
  // Built and packed once for the file, installed once: the slow part (about 15 s).
  packed = await packPackages(path.join(work, "tarballs"));
  app = path.join(work, "app");
  mkdirSync(app);
  await installOffline(app, [packed.client, packed.gateway]);
  config = path.join(work, "config", "reconcile-gateway.json");
  mkdirSync(path.dirname(config));
  writeFileSync(
    config,
    JSON.stringify({
      reconcile: { url: baseUrl, token_env: "RECONCILE_TOKEN" },
      listen: { stdio: true },
      upstreams: { tools: { command: [process.execPath, "--import", "tsx", UPSTREAM], cwd: CHECKOUT } },
    }),
  );
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  if (work) rmSync(work, { recursive: true, force: true });
});

const pkg = (dir: string) => JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
const installed = (name: string) => path.join(app, "node_modules", name);
const text = (r: CallToolResult) => (r.content as { type: string; text: string }[]).map((c) => c.text).join("\n");

async function until<T>(fn: () => Promise<T | null | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts the gateway as an MCP client does, runs one call through it, and reads it back from Reconcile. */
async function driveAndReadBack(server: StdioServerParameters) {
  const who = unique("installed-agent");
  const c = new Client({ name: who, version: "1.0.0" });
  let stderr = "";
  const transport = new StdioClientTransport({ ...server, stderr: "pipe" });
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  await c.connect(transport).catch((e) => {
    throw new Error(`the installed gateway did not start: ${e}\n${stderr}`);
  });
  clients.push(c);
  const tools = (await c.listTools()).tools.map((t) => t.name);
  const r = (await c.callTool({ name: "social.publish", arguments: { text: unique("from the installed gateway") } })) as CallToolResult;
  expect(r.isError, text(r)).toBeFalsy();
  const row = await until(async () => {
    const list = await call(`/api/v1/operations?tool=social.publish&agent=${encodeURIComponent(who)}&limit=5`, { token: agent.token });
    return list.body.operations?.[0] ?? list.body.items?.[0];
  });
  const op = await until(async () => {
    const o = (await call(`/api/v1/operations/${encodeURIComponent(row.operation_id)}`, { token: agent.token })).body;
    return o.stages?.length === 2 ? o : null;
  });
  return { c, tools, result: r, op, who, stderr: () => stderr };
}

describe("the packages as built and packed", () => {
  it("hold the built code, its declarations and the README, and no test file", () => {
    for (const p of [packed.client, packed.gateway]) {
      const files = p.files.map((f) => f.path);
      expect(files).toContain("dist/index.js");
      expect(files).toContain("dist/index.d.ts");
      expect(files).toContain("README.md");
      expect(files.filter((f) => /\.(test|itest|rtest|pgtest)\.|(^|\/)(examples|testing)\//.test(f))).toEqual([]);
      // Whatever package.json points at was packed.
      const manifest = pkg(installed(p.name));
      const targets = [manifest.types, ...Object.values(manifest.exports["."] as Record<string, string>), ...Object.values(manifest.bin ?? {})];
      for (const t of targets as string[]) expect(files, t).toContain(path.posix.normalize(t));
      expect(manifest.engines.node).toBe(">=20");
    }
    expect(packed.gateway.files.map((f) => f.path)).toContain("dist/main.js");
  });

  it("the gateway depends on the client by its version, and its bin is dist/main.js with its #! line", () => {
    const manifest = pkg(installed("@reconcile/gateway"));
    expect(manifest.dependencies["@reconcile/client"]).toBe(packed.client.version);
    expect(manifest.bin).toEqual({ "reconcile-gateway": "dist/main.js" });
    expect(readFileSync(installed("@reconcile/gateway/dist/main.js"), "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
  });
});

describe("installed into an empty folder", () => {
  it("lies outside the checkout, has no tsx anywhere it can load from, and its client is the installed package", () => {
    expect(path.relative(CHECKOUT, app).startsWith("..")).toBe(true);
    for (let dir = app; ; dir = path.dirname(dir)) {
      expect(existsSync(path.join(dir, "node_modules", "tsx")), dir).toBe(false);
      if (path.dirname(dir) === dir) break;
    }
    expect(readdirSync(path.join(app, "node_modules", ".bin"))).toContain("reconcile-gateway");
    // A copy in the folder, not a link back into the checkout.
    expect(realpathSync(installed("@reconcile/client")).startsWith(realpathSync(app) + path.sep)).toBe(true);
    expect(realpathSync(installed("@reconcile/gateway")).startsWith(realpathSync(app) + path.sep)).toBe(true);
  });

  it("a TypeScript user of both packages gets their declarations through `exports` (tsc, strict, NodeNext)", async () => {
    const consumer = path.join(app, "consumer.mts");
    writeFileSync(
      consumer,
      [
        'import { parseConfig, GATEWAY_VERSION, type GatewayConfig } from "@reconcile/gateway";',
        'import { Reconcile, operationIdProblem, type OperationRecord } from "@reconcile/client";',
        'const config: GatewayConfig = parseConfig({ reconcile: { url: "http://localhost:3000" }, upstreams: { tools: { command: ["node", "tools.js"] } } });',
        "export const version: string = GATEWAY_VERSION;",
        'export const problem: string | null = operationIdProblem("..");',
        'const rc = new Reconcile({ url: config.reconcile.url, token: "rcl_x" });',
        "// @ts-expect-error: unused (so this fails) if the declarations were not read and rc were any",
        "export const wrong: number = rc;",
        "export type { OperationRecord };",
      ].join("\n"),
    );
    // The checkout's compiler, run in the folder: skipLibCheck, as the folder has no @types/node.
    const tsc = path.join(CHECKOUT, "node_modules", "typescript", "bin", "tsc");
    const args = [tsc, "--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--skipLibCheck", consumer];
    const out = await promisify(execFile)(process.execPath, args, { cwd: app }).catch((e: { stdout: string }) => ({ stdout: e.stdout, failed: true }));
    expect(out, out.stdout).not.toHaveProperty("failed");
  });

  it("the MCP client configuration `npx reconcile-gateway --config FILE` with the token in env starts it: tools listed, a call recorded in Reconcile", async () => {
    // As in the README's snippet (command, args, env); the SDK adds PATH and HOME as the editors do.
    // cwd stands in for the global install the snippet assumes (npx finds the bin in either), and
    // npm_config_offline keeps npx from ever fetching a package of that name from the registry.
    const { c, tools, result, op, who } = await driveAndReadBack({
      command: "npx",
      args: ["reconcile-gateway", "--config", config],
      env: { RECONCILE_TOKEN: agent.token, npm_config_offline: "true" },
      cwd: app,
    });
    expect(c.getServerVersion()).toEqual({ name: "reconcile-gateway", version: packed.gateway.version });
    expect(tools).toEqual(expect.arrayContaining(["social.publish", "social.read", "billing.charge", "calls", "reconcile_status"]));
    expect(op.agent).toEqual({ name: who, version: "1.0.0" });
    expect(op.trajectory_id).toMatch(/^mcp:stdio-/);
    const receipt = op.stages.find((s: { stage: string }) => s.stage === "receipt");
    expect(receipt.payload).toMatchObject({ status: "accepted", raw: { structuredContent: result.structuredContent } });
    await c.close();
  });

  it("node_modules/.bin/reconcile-gateway runs on plain Node from anywhere (no npx, no tsx, no checkout)", async () => {
    const { c, op, who } = await driveAndReadBack({
      command: path.join(app, "node_modules", ".bin", "reconcile-gateway"),
      args: ["--config", config],
      env: { RECONCILE_TOKEN: agent.token },
      cwd: tmpdir(),
    });
    expect(op.agent.name).toBe(who);
    expect(op.effective_outcome).toBe("uncertain");
    await c.close();
  });
});
