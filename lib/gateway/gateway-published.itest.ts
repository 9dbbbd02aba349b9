/**
 * Published MCP servers behind the gateway, started from the starter configurations a new user
 * copies (lib/gateway/examples/filesystem.json and everything.json): the official MCP SDK client
 * starts the gateway as its server command over stdio, as Claude Desktop or Cursor would. Reads
 * (the servers' readOnlyHint) pass unrecorded and never reach the review queue; the filesystem's
 * write_file (idempotentHint) is recorded and its repeat forwarded; nothing needs a person.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";

let agent: { email: string; token: string };
const clients: Client[] = [];
const dir = mkdtempSync(path.join(tmpdir(), "gateway-published-"));

/** A starter configuration as a user would adapt it: this server's URL; npx run where the package is installed (no network here). */
function starter(name: "filesystem" | "everything", adapt: (c: { upstreams: Record<string, { command: string[]; cwd?: string }> }) => void): string {
  const config = JSON.parse(readFileSync(path.resolve(`lib/gateway/examples/${name}.json`), "utf8"));
  config.reconcile.url = baseUrl;
  config.journal_dir = null;
  for (const u of Object.values(config.upstreams) as { cwd?: string }[]) u.cwd = process.cwd();
  adapt(config);
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

async function connect(file: string, name: string): Promise<Client> {
  const c = new Client({ name, version: "1.0.0" });
  await c.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", path.resolve("lib/gateway/src/main.ts"), "--config", file],
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir, RECONCILE_TOKEN: agent.token, npm_config_offline: "true" },
      stderr: "pipe",
    }),
  );
  clients.push(c);
  return c;
}

const callTool = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as CallToolResult;
const text = (r: CallToolResult) => (r.content as { type: string; text?: string }[]).map((x) => x.text ?? "").join("\n");
const meta = (r: CallToolResult) => r._meta?.["reconcile/outcome"] as { operation_id: string; outcome: string } | undefined;
const ofTool = async (tool: string, agentName: string) => (await call(`/api/v1/operations?tool=${encodeURIComponent(tool)}&agent=${encodeURIComponent(agentName)}&limit=50`, { token: agent.token })).body.items as { operation_id: string; needs_review: boolean }[];
const queue = async () => (await call("/api/v1/operations?needs_review=true&limit=200", { token: agent.token })).body.items.length as number;

beforeAll(async () => {
  agent = await principal("viewer", ["ingest", "read"]);
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
});

describe("@modelcontextprotocol/server-filesystem from its starter configuration", () => {
  it("read_file passes unrecorded; write_file is recorded (idempotent: not for review) and its repeat forwarded", { timeout: 60_000 }, async () => {
    const sandbox = mkdtempSync(path.join(dir, "sandbox-"));
    const file = starter("filesystem", (c) => (c.upstreams.fs.command = c.upstreams.fs.command.map((a) => (a === "./sandbox" ? sandbox : a))));
    const who = unique("fs-agent");
    const fs = await connect(file, who);
    const before = await queue();
    const target = path.join(sandbox, "report.md");
    const first = await callTool(fs, "write_file", { path: target, content: "# Report\nall good\n" });
    expect(first.isError, text(first)).toBeFalsy();
    expect(readFileSync(target, "utf8")).toBe("# Report\nall good\n");
    expect(meta(first)).toMatchObject({ outcome: "uncertain" });
    const again = await callTool(fs, "write_file", { path: target, content: "# Report\nall good\n" });
    expect(again.isError, text(again)).toBeFalsy();
    expect(meta(again)!.operation_id).toBe(`${meta(first)!.operation_id}~2`);
    for (let i = 0; i < 3; i++) expect(text(await callTool(fs, "read_file", { path: target }))).toContain("all good");
    const writes = await ofTool("write_file", who);
    expect(writes).toHaveLength(2);
    expect(writes.every((w) => !w.needs_review)).toBe(true);
    expect(await ofTool("read_file", who)).toEqual([]);
    expect(await queue()).toBe(before);
  });
});

describe("@modelcontextprotocol/server-everything from its starter configuration", () => {
  it("echo and get-sum (read-only) pass unrecorded, their repeats are answered, and the review queue does not grow", { timeout: 60_000 }, async () => {
    const who = unique("everything-agent");
    const everything = await connect(starter("everything", () => undefined), who);
    const before = await queue();
    for (let i = 0; i < 2; i++) {
      expect(text(await callTool(everything, "echo", { message: "hello" }))).toContain("hello");
      expect(text(await callTool(everything, "get-sum", { a: 2, b: 3 }))).toContain("5");
    }
    expect(await ofTool("echo", who)).toEqual([]);
    expect(await ofTool("get-sum", who)).toEqual([]);
    expect(await queue()).toBe(before);
  });
});
