/**
 * `npm run bench:gateway`: what the MCP gateway adds to a tools/call (issue 40 part 3). In one
 * run, against the same upstream (the example tool server over Streamable HTTP, its own process),
 * 50 MCP SDK clients call a tool straight and 50 call it through the gateway (its own process,
 * recording into a Reconcile server on a fresh database), in alternating phases; latencies
 * per call, p50 and p99 of each, and the difference.
 *
 *   npm run bench:gateway -- [--seconds 5] [--concurrency 50] [--rounds 2] [--rates 100,200,0] [--database-url URL]
 *
 * Each rate is a run of its own: 50 clients that together offer that many calls a second (what
 * the gateway adds to a call while the machine keeps up), and 0, back to back (where 2 cores
 * shared by the load, the upstream, the gateway and Reconcile run out).
 *
 * Then the verdict at the boundary (issue 48): `--verdict-calls` (200) calls of social.publish
 * with `await_verdict`, whose verifier checks at 0s against a local social service that shows a
 * post at once, from 10 clients offering 20 calls a second: each call's time from its receipt to
 * the agent's answer, beside the verifier's own read (its HTTP exchange, as recorded).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startBenchServer } from "./bench-server";
import { socialVerifier, startSocialService } from "../verifiers/social-service";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const seconds = Number(arg("seconds", "5"));
const concurrency = Number(arg("concurrency", "50"));
const rounds = Number(arg("rounds", "2"));
/** Offered loads in calls a second; 0 = back to back. */
const rates = arg("rates", "100,200,0").split(",").map(Number);
const dir = mkdtempSync(path.join(tmpdir(), "bench-gateway-"));
const databaseUrl = arg("database-url", `file:${path.join(dir, "bench.db")}`);
const verdictCalls = Number(arg("verdict-calls", "200"));

const children: ChildProcess[] = [];
process.once("exit", () => children.forEach((c) => c.kill("SIGTERM")));

function startChild(args: string[], env: NodeJS.ProcessEnv, ready: RegExp, stream: "stdout" | "stderr"): Promise<string> {
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child[stream]!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited (${code}): ${out}`)));
  });
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * Each of the clients calls in a loop for `ms`: back to back (`rate` 0: the machine's limit), or
 * paced so that all together offer `rate` calls a second (latency below saturation).
 */
async function phase(clients: Client[], ms: number, rate = 0): Promise<number[]> {
  const latencies: number[] = [];
  const start = Date.now();
  const end = start + ms;
  const every = rate > 0 ? (clients.length * 1000) / rate : 0;
  let n = 0;
  await Promise.all(
    clients.map(async (c, i) => {
      for (let k = 0; Date.now() < end; k++) {
        if (every) {
          const due = start + (i / clients.length) * every + k * every;
          if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
          if (Date.now() >= end) break;
        }
        const t = performance.now();
        const r = await c.callTool({ name: "billing.charge", arguments: { amount: 1 + (n++ % 90) } });
        latencies.push(performance.now() - t);
        if (r.isError) throw new Error(`a call failed: ${JSON.stringify(r.content)}`);
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}

/**
 * Calls with await_verdict: per call, the time from its receipt (as recorded) to the agent's
 * answer, and the verifier's own read (its HTTP exchange); p50 and p99 of each.
 */
async function verdicts(clients: Client[], base: string, token: string): Promise<void> {
  const every = (clients.length * 1000) / 20;
  const done: { id: string; answeredAt: number; total: number; outcome: string }[] = [];
  const start = Date.now();
  let n = 0;
  await Promise.all(
    clients.map(async (c, i) => {
      for (let k = 0; n < verdictCalls; k++) {
        const due = start + (i / clients.length) * every + k * every;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        if (n >= verdictCalls) break;
        n++;
        const t = performance.now();
        const r = await c.callTool({ name: "social.publish", arguments: { text: `bench post ${i}-${k}` } });
        const m = r._meta?.["reconcile/outcome"] as { operation_id: string; outcome: string } | undefined;
        if (!m) throw new Error(`an answer without the outcome: ${JSON.stringify(r).slice(0, 300)}`);
        done.push({ id: m.operation_id, answeredAt: Date.now(), total: performance.now() - t, outcome: m.outcome });
      }
    }),
  );
  const afterReceipt: number[] = [];
  const reads: number[] = [];
  for (const d of done) {
    const op = await (await fetch(`${base}/api/v1/operations/${encodeURIComponent(d.id)}`, { headers: { authorization: `Bearer ${token}` } })).json();
    const receipt = op.stages.find((s: { stage: string }) => s.stage === "receipt");
    const read = op.stages.find((s: { stage: string; payload: { verifier?: { ms?: number } } }) => s.stage === "canonical_read" && s.payload.verifier?.ms !== undefined);
    afterReceipt.push(d.answeredAt - Date.parse(receipt.payload.observed_at));
    if (read) reads.push(read.payload.verifier.ms);
  }
  afterReceipt.sort((a, b) => a - b);
  reads.sort((a, b) => a - b);
  const verified = done.filter((d) => d.outcome === "verified").length;
  const totals = done.map((d) => d.total).sort((a, b) => a - b);
  console.log(`${clients.length} clients, ${done.length} calls with await_verdict at 20 calls/s (verifier checks at 0s; ${verified} answered verified):`);
  console.log(`  call through the gateway          p50 ${pct(totals, 50).toFixed(1).padStart(6)} ms  p99 ${pct(totals, 99).toFixed(1).padStart(6)} ms`);
  console.log(`  receipt → the agent's answer     p50 ${pct(afterReceipt, 50).toFixed(1).padStart(6)} ms  p99 ${pct(afterReceipt, 99).toFixed(1).padStart(6)} ms`);
  console.log(`  the verifier's own read          p50 ${pct(reads, 50).toFixed(1).padStart(6)} ms  p99 ${pct(reads, 99).toFixed(1).padStart(6)} ms`);
  console.log(`  above the verifier's read: p50 +${(pct(afterReceipt, 50) - pct(reads, 50)).toFixed(1)} ms (target: at most +50 ms)`);
}

async function clientsFor(url: string): Promise<Client[]> {
  return Promise.all(
    Array.from({ length: concurrency }, async (_, i) => {
      const c = new Client({ name: `bench-${i}`, version: "1" });
      await c.connect(new StreamableHTTPClientTransport(new URL(url)));
      return c;
    }),
  );
}

async function main() {
  console.log(`bench:gateway: ${concurrency} concurrent MCP clients, ${rounds} rounds of ${seconds} s each way, database ${databaseUrl.replace(/:[^:@/]*@/, ":***@")}`);
  const verifierEnv = { RECONCILE_VERIFIER_ALLOW_HTTP: "1", RECONCILE_VERIFIER_ALLOW_PRIVATE: "1", SOCIAL_READ_TOKEN: "bench-read-token", RECONCILE_VERIFIER_ENV: "SOCIAL_READ_TOKEN" };
  const { base, token } = await startBenchServer(databaseUrl, "ingest,read,admin", verifierEnv);
  const social = await startSocialService({ visibleAfterMs: 0, keepSeen: false });
  const defined = await fetch(`${base}/api/v1/verifiers`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(socialVerifier(social.base, { name: "bench-post", tool: "social.publish", checksAt: ["0s"], pendingUntil: "1m" })),
  });
  if (!defined.ok) throw new Error(`the verifier was refused: ${await defined.text()}`);
  const upstream = await startChild(["--import", "tsx", "lib/gateway/examples/tools-server.ts", "--http", "0"], { ...process.env, SOCIAL_URL: social.base }, /(http:\/\/\S+\/mcp)/, "stdout");
  const config = path.join(dir, "reconcile-gateway.json");
  const tools = { "billing.charge": { dedupe: false }, "social.publish": { dedupe: false, receipt_id_from: "/id", await_verdict: "10s" } };
  writeFileSync(config, JSON.stringify({ reconcile: { url: base }, listen: { http: { port: 0 } }, upstreams: { pay: { url: upstream } }, tools, journal_dir: path.join(dir, "journal") }));
  const gateway = await startChild(["--import", "tsx", "lib/gateway/src/main.ts", "--config", config], { ...process.env, RECONCILE_TOKEN: token }, /ready on (http:\/\/\S+\/mcp)/, "stderr");
  const direct = await clientsFor(upstream);
  const through = await clientsFor(gateway);
  // Warm both paths (JIT, connections, the server's first records).
  await phase(direct, 1000);
  await phase(through, 2000);
  for (const rate of rates) {
    const all = { direct: [] as number[], gateway: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      all.direct.push(...(await phase(direct, seconds * 1000, rate)));
      all.gateway.push(...(await phase(through, seconds * 1000, rate)));
    }
    const d = all.direct.sort((a, b) => a - b);
    const g = all.gateway.sort((a, b) => a - b);
    const row = (name: string, s: number[]) => `  ${name.padEnd(16)} ${String(s.length).padStart(7)} calls  ${(s.length / (rounds * seconds)).toFixed(0).padStart(6)}/s  p50 ${pct(s, 50).toFixed(1).padStart(6)} ms  p99 ${pct(s, 99).toFixed(1).padStart(6)} ms`;
    console.log(rate ? `${concurrency} clients offering ${rate} calls/s together:` : `${concurrency} clients calling back to back (the machine's limit):`);
    console.log(row("straight", d));
    console.log(row("through gateway", g));
    console.log(`  added by the gateway: p50 +${(pct(g, 50) - pct(d, 50)).toFixed(1)} ms, p99 +${(pct(g, 99) - pct(d, 99)).toFixed(1)} ms (target: at most +5 ms and +20 ms)`);
  }
  await verdicts(through.slice(0, 10), base, token);
  const ops = await (await fetch(`${base}/api/v1/operations?tool=billing.charge&limit=1`, { headers: { authorization: `Bearer ${token}` } })).json();
  console.log(`recorded in Reconcile: ${ops.items?.length ? "yes" : "NO"} (each gateway call is an operation with its intent and receipt)`);
  await Promise.allSettled([...direct, ...through].map((c) => c.close()));
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
