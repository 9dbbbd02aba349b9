import { readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { encodeJsonRequest } from "@/lib/otlp/decode";
import { isPossibleOperationId } from "@/lib/domain/wire";
import { baseUrl, call, chainCount, principal } from "@/lib/testing/integration";

/**
 * OTLP bodies as fuzz families (POST /api/v1/otlp/v1/traces), on SQLite and PostgreSQL like
 * the other fuzz files: random and mutated protobuf, OTLP JSON with values of any type where
 * the structure expects ids, lists and attributes, wrong ids, and huge attributes (100,000 of
 * them, nesting far past the 32-level limit, strings of megabytes). Oracle: never a 5xx; a 4xx
 * stores nothing; a 200 is an ExportTraceServiceResponse in the request's encoding; the server
 * is healthy after every case; spans of one trace in any order link its tool calls to the first
 * conversation and agent named (trace links). RELIABILITY_FUZZ_RUNS (default 1,000) / 20 per family.
 */
const RUNS = Math.max(5, Math.round(Number(process.env.RELIABILITY_FUZZ_RUNS || 1000) / 20));
const opts = { numRuns: RUNS, endOnFailure: true } as const;
const MiB = 1024 * 1024;
let token: string;

beforeAll(async () => {
  ({ token } = await principal("admin", ["ingest", "verify", "read"]));
});

const fixture = (name: string) => JSON.parse(readFileSync(path.resolve("lib/otlp/fixtures", `${name}.json`), "utf8"));
const FIXTURES = ["gen-ai", "vercel-ai", "openinference", "traceloop"];

async function judge(body: Uint8Array | string, protobuf: boolean, what: string): Promise<number> {
  const before = await chainCount();
  const res = await fetch(`${baseUrl}/api/v1/otlp/v1/traces`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": protobuf ? "application/x-protobuf" : "application/json" },
    body: body as BodyInit,
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const context = `${what} (${(body.length / MiB).toFixed(2)} MiB) → ${res.status} ${Buffer.from(bytes.slice(0, 300)).toString()}`;
  expect(res.status, context).toBeLessThan(500);
  if (res.status >= 400) {
    expect(JSON.parse(Buffer.from(bytes).toString()).error.code, context).toEqual(expect.any(String));
    expect(await chainCount(), `${context}: a refused request stored nothing`).toBe(before);
  } else {
    expect(res.status, context).toBe(200);
    expect(res.headers.get("content-type"), context).toBe(protobuf ? "application/x-protobuf" : "application/json");
    if (!protobuf) expect(JSON.parse(Buffer.from(bytes).toString()), context).toEqual(expect.any(Object));
  }
  expect((await fetch(`${baseUrl}/api/health`)).status, `healthy after ${context}`).toBe(200);
  return res.status;
}

/** Fresh ids so that runs do not collide (and re-sent spans are not the point here). */
function fresh(f: any): any {
  const text = JSON.stringify(f).replace(/"[0-9a-f]{32}"/g, () => `"${crypto.randomUUID().replace(/-/g, "")}"`);
  return JSON.parse(text);
}

describe("OTLP fuzz families", () => {
  it("random bytes as protobuf", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), async (bytes) => {
        const status = await judge(bytes, true, `${bytes.length} random bytes`);
        expect([200, 400]).toContain(status);
      }),
      opts,
    );
  });

  it("a valid protobuf request, truncated or with bytes changed", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FIXTURES), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }), fc.option(fc.nat()), async (name, flips, cut) => {
        const bytes = encodeJsonRequest(fresh(fixture(name)));
        for (const [at, value] of flips) bytes[at % bytes.length] = value;
        const body = cut === null ? bytes : bytes.slice(0, cut % bytes.length);
        const status = await judge(body, true, `${name} with ${flips.length} bytes changed${cut === null ? "" : `, cut at ${cut % bytes.length}`}`);
        expect([200, 400]).toContain(status);
      }),
      opts,
    );
  });

  it("OTLP JSON with any value where ids, lists, times and attributes belong", async () => {
    const slots = ["traceId", "spanId", "parentSpanId", "startTimeUnixNano", "endTimeUnixNano", "attributes", "status", "kind", "name"] as const;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FIXTURES), fc.constantFrom(...slots), fc.anything({ maxDepth: 4 }), fc.nat(), async (name, slot, value, which) => {
        const f = fresh(fixture(name));
        const spans = f.resourceSpans[0].scopeSpans[0].spans;
        spans[which % spans.length][slot] = value;
        const status = await judge(JSON.stringify(f) ?? "null", false, `${name}: ${slot} = ${JSON.stringify(value)?.slice(0, 80)}`);
        expect([200, 400]).toContain(status);
      }),
      opts,
    );
  });

  it("ids of the wrong length or alphabet", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), fc.constantFrom("traceId", "spanId", "parentSpanId"), fc.boolean(), async (id, slot, protobuf) => {
        const f = fresh(fixture("gen-ai"));
        f.resourceSpans[0].scopeSpans[0].spans[2][slot] = id;
        let body: Uint8Array | string;
        if (protobuf) {
          // Bytes of any length: what hex text cannot say.
          f.resourceSpans[0].scopeSpans[0].spans[2][slot] = Buffer.from(id).toString("hex");
          body = encodeJsonRequest(f);
        } else body = JSON.stringify(f);
        const status = await judge(body, protobuf, `${slot} = ${JSON.stringify(id)}${protobuf ? " (as bytes)" : ""}`);
        const valid = protobuf ? [0, { traceId: 16, spanId: 8, parentSpanId: 8 }[slot]].includes(Buffer.byteLength(id)) && (Buffer.byteLength(id) > 0 || slot === "parentSpanId") : /^[0-9a-fA-F]*$/.test(id) && id.length === { traceId: 32, spanId: 16, parentSpanId: 16 }[slot];
        if (!valid && !(slot === "parentSpanId" && id === "")) expect(status).toBe(400);
      }),
      opts,
    );
  });

  it("huge attributes: many keys, deep values, long strings", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("keys", "deep", "long"), fc.constantFrom(10, 33, 5_000, 7_000, 100_000), fc.boolean(), async (kind, n, protobuf) => {
        const f = fresh(fixture("vercel-ai"));
        const attrs = f.resourceSpans[0].scopeSpans[0].spans[1].attributes;
        if (kind === "keys") for (let i = 0; i < n; i++) attrs.push({ key: `k${i}`, value: { stringValue: `v${i}` } });
        if (kind === "deep") {
          let value: any = { stringValue: "x" };
          for (let i = 0; i < n; i++) value = { kvlistValue: { values: [{ key: "a", value }] } };
          attrs.push({ key: "deep", value });
        }
        if (kind === "long") attrs.find((a: any) => a.key === "ai.toolCall.result").value.stringValue = JSON.stringify({ text: "y".repeat(Math.min(n * 100, 12 * MiB)) });
        let body: Uint8Array | string;
        try {
          body = protobuf ? encodeJsonRequest(f) : JSON.stringify(f);
        } catch {
          return; // protobufjs itself cannot encode 100,000 levels: nothing to send
        }
        const status = await judge(body, protobuf, `${kind} ${n}${protobuf ? " (protobuf)" : ""}`);
        if (kind === "deep" && n > 32) expect(status).toBe(400);
        else expect(status).toBe(200);
      }),
      opts,
    );
  });

  it("trace links: tool and invoke_agent spans of two traces, one a request, in any order, naming any conversation and agent", async () => {
    const hex = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => b.toString(16).padStart(2, "0")).join("");
    const name = fc.oneof(fc.string({ maxLength: 300 }), fc.constantFrom("", "a b", "x/y", "a".repeat(201), "conv-ok", "é\u0000x", "a".repeat(5000)));
    const step = fc.oneof(
      fc.record({ kind: fc.constant("tool" as const), trace: fc.nat(1) }),
      fc.record({ kind: fc.constant("agent" as const), trace: fc.nat(1), conversation: fc.option(name), agent: fc.option(name) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), fc.boolean(), async (steps, protobuf) => {
        const traces = [hex(16), hex(16)];
        const roots = [hex(8), hex(8)];
        // The model: per trace, the first valid conversation and the first agent name to arrive.
        const first: { conversation: string | null; agent: string | null }[] = [{ conversation: null, agent: null }, { conversation: null, agent: null }];
        const tools: { id: string; trace: number }[] = [];
        for (const [i, st] of steps.entries()) {
          const attrs: Record<string, string> = {};
          let span: Record<string, unknown>;
          if (st.kind === "tool") {
            const callId = `c${i}-${hex(4)}`;
            tools.push({ id: `otel:${traces[st.trace]}:${callId}`, trace: st.trace });
            Object.assign(attrs, { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t", "gen_ai.tool.call.id": callId });
            span = { parentSpanId: roots[st.trace], spanId: hex(8) };
          } else {
            attrs["gen_ai.operation.name"] = "invoke_agent";
            if (st.conversation !== null) attrs["gen_ai.conversation.id"] = st.conversation;
            if (st.agent !== null) attrs["gen_ai.agent.name"] = st.agent;
            span = { spanId: roots[st.trace] };
            const text = (v: string | null) => (v ? v.replace(/\u0000/g, "\uFFFD") : null);
            const conversation = text(st.conversation);
            if (!first[st.trace].conversation && conversation && isPossibleOperationId(conversation)) first[st.trace].conversation = conversation;
            if (!first[st.trace].agent && text(st.agent)) first[st.trace].agent = text(st.agent)!.slice(0, 4000);
          }
          const t = String(BigInt(Date.now() - 60_000) * 1_000_000n);
          const f = {
            resourceSpans: [
              {
                resource: { attributes: [{ key: "service.name", value: { stringValue: "svc" } }] },
                scopeSpans: [{ spans: [{ traceId: traces[st.trace], name: st.kind, startTimeUnixNano: t, endTimeUnixNano: t, ...span, attributes: Object.entries(attrs).map(([key, v]) => ({ key, value: { stringValue: v } })) }] }],
              },
            ],
          };
          expect(await judge(protobuf ? encodeJsonRequest(f) : JSON.stringify(f), protobuf, `step ${i}: ${JSON.stringify(st).slice(0, 200)}`)).toBe(200);
        }
        for (const t of tools) {
          const op = await call(`/api/v1/operations/${encodeURIComponent(t.id)}`, { token });
          expect(op.status).toBe(200);
          const want = first[t.trace];
          expect({ trajectory: op.body.trajectory_id, agent: op.body.agent }, JSON.stringify(steps).slice(0, 500)).toEqual({
            trajectory: want.conversation ?? traces[t.trace],
            agent: { name: want.agent ?? "svc" },
          });
        }
      }),
      opts,
    );
  });
});
