/**
 * The gateway killed (SIGKILL) between forwarding a call and recording its receipt (issue 40
 * part 2, the crash harness): while the receipt cannot reach Reconcile, the upstream answers and
 * the MCP client gets its result; the gateway dies. Reconcile then holds the operation as
 * uncertain (its intent, no receipt), never silently missing; a gateway started again on the
 * same journal sends the receipt the upstream acknowledged, and nothing is lost.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { TestProxy } from "@/lib/client/testing/proxy";
import { baseUrl, call, principal, unique } from "@/lib/testing/integration";

let token: string;
let proxy: TestProxy;
const children: ChildProcess[] = [];
beforeAll(async () => {
  token = (await principal("viewer", ["ingest", "read"])).token;
  proxy = await TestProxy.start(baseUrl);
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await proxy.stop();
});

function startGateway(config: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", path.resolve("lib/gateway/src/main.ts"), "--config", config], {
    env: { ...process.env, RECONCILE_TOKEN: token },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /ready on (http:\/\/\S+\/mcp)/.exec(err);
      if (m) resolve({ child, url: m[1] });
    });
    child.once("exit", (code, signal) => reject(new Error(`the gateway exited (${code ?? signal}): ${err}`)));
  });
}

const operation = async (id: string) => call(`/api/v1/operations/${encodeURIComponent(id)}`, { token });

it("loses nothing the upstream acknowledged, and leaves the operation uncertain meanwhile", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "gw-crash-"));
  const config = path.join(dir, "reconcile-gateway.json");
  writeFileSync(
    config,
    JSON.stringify({
      reconcile: { url: proxy.url },
      listen: { http: { port: 0 } },
      upstreams: { tools: { command: [process.execPath, "--import", "tsx", path.resolve("lib/gateway/examples/tools-server.ts")], cwd: process.cwd() } },
      tools: { "billing.slow": { operation_id_from: "/request_id" } },
    }),
  );
  const first = await startGateway(config);
  const client = new Client({ name: "crash-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(first.url)));
  const id = unique("crash-gw");

  // The call takes a second upstream; once its intent is stored, Reconcile stops taking records.
  const answered = client.callTool({ name: "billing.slow", arguments: { ms: 1200, request_id: id } });
  for (let i = 0; (await operation(id)).status !== 200; i++) {
    if (i > 100) throw new Error("the intent never arrived");
    await new Promise((r) => setTimeout(r, 50));
  }
  proxy.decide = (req) => (req.method === "POST" ? { status: 503, headers: { "retry-after": "1" }, body: '{"error":{"code":"unavailable","message":"down for the test"}}' } : null);
  const result = (await answered) as { isError?: boolean; content: { text: string }[] };
  expect(result.isError).toBeFalsy();
  expect(result.content[0].text).toBe("charged, slowly");

  first.child.kill("SIGKILL");
  await new Promise((r) => first.child.once("exit", r));
  await client.close().catch(() => undefined);

  // Uncertain, not missing: the intent is there, the receipt is not.
  const meanwhile = (await operation(id)).body;
  expect(meanwhile.stages.map((s: { stage: string }) => s.stage)).toEqual(["intent"]);
  expect(meanwhile).toMatchObject({ effective_outcome: "uncertain", reason: "no receipt recorded" });
  // The receipt waits in the dead process's journal.
  const journals = readdirSync(path.join(dir, ".reconcile-gateway"));
  expect(journals.length).toBeGreaterThan(0);
  for (const f of journals) expect(f).toMatch(new RegExp(`^journal-${first.child.pid}-\\d+\\.ndjson$`));

  // Reconcile answers again; a new gateway on the same journal sends what the upstream acknowledged.
  proxy.decide = () => null;
  const second = await startGateway(config);
  let op = meanwhile;
  for (let i = 0; op.stages.length < 2; i++) {
    if (i > 200) throw new Error("the journalled receipt never arrived");
    await new Promise((r) => setTimeout(r, 50));
    op = (await operation(id)).body;
  }
  expect(op.stages.map((s: { stage: string }) => s.stage)).toEqual(["intent", "receipt"]);
  expect(op.stages[1].payload).toMatchObject({ status: "accepted", raw: { text: "charged, slowly" } });
  // The dead process's journal was adopted, not left to be sent twice.
  expect(readdirSync(path.join(dir, ".reconcile-gateway")).filter((f) => f.startsWith(`journal-${first.child.pid}-`))).toEqual([]);
  second.child.kill("SIGTERM");
  await new Promise((r) => second.child.once("exit", r));
});
