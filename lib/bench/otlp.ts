/**
 * `npm run bench:otlp`: tool spans per second through POST /api/v1/otlp/v1/traces (protobuf,
 * 512 spans a request), measured in the same run, on the same server and database, as batched
 * POST /api/v1/receipts carrying the very records those spans become (500 a request, its
 * maximum). The two alternate request by request, so that a slower disk or a busier core later
 * in the run weighs on both alike. Prints figures and the ratio; asserts nothing
 * (docs/BENCHMARKS.md).
 *
 * Needs a build (`npm run build`). Options: --spans N (per side, default 20,480), --clients N
 * (requests in flight per side, default 2), --database-url postgresql://… (an empty database).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { encodeJsonRequest } from "../otlp/decode";
import { spansOf } from "../otlp/spans";
import { recordsOfSpans } from "../otlp/tool-spans";
import { startBenchServer } from "./bench-server";

const { values } = parseArgs({
  options: { spans: { type: "string", default: "20480" }, clients: { type: "string", default: "2" }, "database-url": { type: "string" } },
});
const PER_REQUEST = 512;
const REQUESTS = Math.max(1, Math.round(Number(values.spans) / PER_REQUEST));
const CLIENTS = Number(values.clients);

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const T0 = BigInt(Date.now() - 3_600_000) * 1_000_000n;

/** One OTLP request: an agent span and 512 GenAI execute_tool spans under it, as an SDK sends them. */
function otlpRequest(n: number) {
  const traceId = hex(16);
  const root = hex(8);
  const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });
  const spans = [
    { traceId, spanId: root, name: "invoke_agent bench", kind: 1, startTimeUnixNano: String(T0), endTimeUnixNano: String(T0 + 9_000_000_000n), attributes: [attr("gen_ai.operation.name", "invoke_agent"), attr("gen_ai.agent.name", "bench-agent")] },
    ...Array.from({ length: PER_REQUEST }, (_, i) => ({
      traceId,
      spanId: hex(8),
      parentSpanId: root,
      name: "execute_tool social.publish",
      kind: 1,
      startTimeUnixNano: String(T0 + BigInt(i) * 1_000_000n),
      endTimeUnixNano: String(T0 + BigInt(i) * 1_000_000n + 800_000n),
      status: { code: 1 },
      attributes: [
        attr("gen_ai.operation.name", "execute_tool"),
        attr("gen_ai.tool.name", "social.publish"),
        attr("gen_ai.tool.call.id", `call-${n}-${i}`),
        attr("gen_ai.tool.type", "function"),
        attr("gen_ai.tool.call.arguments", JSON.stringify({ text: `post ${n}-${i}`, account: "@reconcile" })),
        attr("gen_ai.tool.call.result", JSON.stringify({ accepted: true, post_id: `p-${n}-${i}` })),
      ],
    })),
  ];
  return { resourceSpans: [{ resource: { attributes: [attr("service.name", "bench")] }, scopeSpans: [{ scope: { name: "bench" }, spans }] }] };
}

async function main() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "reconcile-bench-otlp-"));
  const url = values["database-url"] || process.env.BENCH_DATABASE_URL || `file:${path.join(tmp, "bench.db")}`;
  const { base, token, server } = await startBenchServer(url, "ingest,read");
  console.log(`Reconcile OTLP benchmark · ${os.cpus().length} cores · ${url.startsWith("file:") ? "SQLite (embedded)" : "PostgreSQL"} · node ${process.version}`);
  console.log(`${REQUESTS} OTLP requests of ${PER_REQUEST} tool spans (protobuf) against the same records as receipts batches, ${CLIENTS} in flight each, alternating\n`);

  // Bodies are made before the clock starts: the server, not the client, is measured. The
  // receipts side sends what the OTLP side's spans become (other trace ids: nothing deduplicates).
  const otlpBodies = Array.from({ length: REQUESTS }, (_, n) => encodeJsonRequest(otlpRequest(n)) as Uint8Array<ArrayBuffer>);
  const receiptBodies: string[] = [];
  for (let n = 0; n < REQUESTS; n++) {
    const records = recordsOfSpans(spansOf(otlpRequest(n))).map((r) => r.record);
    for (let i = 0; i < records.length; i += 500) receiptBodies.push(JSON.stringify({ records: records.slice(i, i + 500) }));
  }
  const otlpBytes = otlpBodies.reduce((s, b) => s + b.length, 0);
  const receiptBytes = receiptBodies.reduce((s, b) => s + b.length, 0);

  const auth = { authorization: `Bearer ${token}` };
  // Warm-up: both routes compiled and connections open.
  await fetch(`${base}/api/v1/otlp/v1/traces`, { method: "POST", headers: { ...auth, "content-type": "application/x-protobuf" }, body: encodeJsonRequest(otlpRequest(-1)) as BodyInit });
  await fetch(`${base}/api/v1/receipts`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ records: recordsOfSpans(spansOf(otlpRequest(-2))).slice(0, 100).map((r) => r.record) }) });

  const time = { otlp: 0, receipts: 0 };
  const errors = { otlp: 0, receipts: 0 };
  const timed = async (side: "otlp" | "receipts", send: () => Promise<Response>, ok: (r: Response, text: string) => boolean) => {
    const s = performance.now();
    const res = await send();
    const text = await res.text();
    time[side] += performance.now() - s;
    if (!ok(res, text)) errors[side]++;
  };
  let o = 0;
  let r = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (o < otlpBodies.length || r < receiptBodies.length) {
        if (o < otlpBodies.length) {
          const body = otlpBodies[o++];
          await timed("otlp", () => fetch(`${base}/api/v1/otlp/v1/traces`, { method: "POST", headers: { ...auth, "content-type": "application/x-protobuf" }, body }), (res, text) => res.status === 200 && text.length === 0);
        }
        if (r < receiptBodies.length) {
          const body = receiptBodies[r++];
          await timed("receipts", () => fetch(`${base}/api/v1/receipts`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body }), (res) => res.status === 200);
        }
      }
    }),
  );
  const largest = await largestRequest(base, auth);
  server.kill("SIGTERM");
  const spans = REQUESTS * PER_REQUEST;
  // Time is summed over the requests of each side (CLIENTS at a time): per-side throughput is
  // spans × CLIENTS / summed time, the rate each side held while both ran.
  const rate = (side: "otlp" | "receipts") => (spans * CLIENTS) / (time[side] / 1000);
  const otlpRate = rate("otlp");
  const receiptRate = rate("receipts");
  console.log(`OTLP/HTTP protobuf:      ${otlpRate.toFixed(0)} tool spans/s · ${(otlpBytes / spans).toFixed(0)} bytes a span · errors ${errors.otlp}`);
  console.log(`POST /api/v1/receipts:   ${receiptRate.toFixed(0)} records/s · ${(receiptBytes / spans).toFixed(0)} bytes a record · errors ${errors.receipts}`);
  console.log(`OTLP reaches ${((otlpRate / receiptRate) * 100).toFixed(0)}% of batched receipts on the same records (goal: at least 70%)`);
  console.log(
    `one request near the 16 MiB limit (${largest.spans.toLocaleString("en")} tool spans, ${(largest.bytes / 1024 / 1024).toFixed(1)} MiB): ${largest.status} in ${largest.ms.toFixed(0)} ms; slowest /api/health meanwhile ${largest.worstHealth.toFixed(0)} ms over ${largest.polls} polls`,
  );
  rmSync(tmp, { recursive: true, force: true });
  process.exit(errors.otlp + errors.receipts ? 1 : 0);
}

/** The largest request the endpoint takes, sent while /api/health is polled every 100 ms: how long others wait meanwhile. */
async function largestRequest(base: string, auth: Record<string, string>) {
  const one = otlpRequest(1_000_000);
  const template = one.resourceSpans[0].scopeSpans[0].spans[1];
  const spans = one.resourceSpans[0].scopeSpans[0].spans;
  // The most tool spans one request may store (MAX_TOOL_SPANS), with arguments that bring it near 16 MiB.
  const count = 10_000;
  const args = { key: "gen_ai.tool.call.arguments", value: { stringValue: JSON.stringify({ text: "x".repeat(1200) }) } };
  for (let i = spans.length; i < count; i++) spans.push({ ...template, spanId: hex(8), attributes: [...template.attributes.slice(0, 2), { key: "gen_ai.tool.call.id", value: { stringValue: `big-${i}` } }, template.attributes[3], args, template.attributes[5]] });
  const body = encodeJsonRequest(one) as Uint8Array<ArrayBuffer>;
  let done = false;
  let worstHealth = 0;
  let polls = 0;
  const poller = (async () => {
    while (!done) {
      const s = performance.now();
      await (await fetch(`${base}/api/health`)).arrayBuffer();
      worstHealth = Math.max(worstHealth, performance.now() - s);
      polls++;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const s = performance.now();
  const res = await fetch(`${base}/api/v1/otlp/v1/traces`, { method: "POST", headers: { ...auth, "content-type": "application/x-protobuf" }, body });
  await res.arrayBuffer();
  const ms = performance.now() - s;
  done = true;
  await poller;
  return { spans: count, bytes: body.length, status: res.status, ms, worstHealth, polls };
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
