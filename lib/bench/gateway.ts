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
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startBenchServer } from "./bench-server";

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
  const { base, token } = await startBenchServer(databaseUrl, "ingest,read");
  const upstream = await startChild(["--import", "tsx", "lib/gateway/examples/tools-server.ts", "--http", "0"], process.env, /(http:\/\/\S+\/mcp)/, "stdout");
  const config = path.join(dir, "reconcile-gateway.json");
  writeFileSync(config, JSON.stringify({ reconcile: { url: base }, listen: { http: { port: 0 } }, upstreams: { pay: { url: upstream } }, tools: { "billing.charge": { dedupe: false } }, journal_dir: path.join(dir, "journal") }));
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
  const ops = await (await fetch(`${base}/api/v1/operations?tool=billing.charge&limit=1`, { headers: { authorization: `Bearer ${token}` } })).json();
  console.log(`recorded in Reconcile: ${ops.items?.length ? "yes" : "NO"} (each gateway call is an operation with its intent and receipt)`);
  await Promise.allSettled([...direct, ...through].map((c) => c.close()));
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
