/**
 * An agent that emits OpenTelemetry spans the way real ones do, for the OTLP integration tests
 * (lib/otlp/otlp.itest.ts). Run as its own process so that the exporters are configured only
 * through the standard OTEL_EXPORTER_OTLP_* environment variables, exactly as users set them:
 *
 *   tsx lib/otlp/testing/agent-run.ts sdk-proto|sdk-json|ai-sdk|ai-sdk-legacy|simple-tool-first|simple-agent-first|simple-changed TAG
 *
 * `sdk-*`: the official OpenTelemetry JS SDK with the protobuf or JSON OTLP/HTTP exporter, and
 * GenAI `execute_tool` spans under an `invoke_agent` span. `ai-sdk*`: a Vercel AI SDK
 * `generateText` run with tools and telemetry, driven by the SDK's own mock language model (no
 * network), with the AI SDK's OpenTelemetry integration (GenAI spans) or its legacy one
 * (`ai.toolCall` spans). `simple-*`: the SDK's SimpleSpanProcessor, which exports each span as it
 * ends (each its own request, awaited before the next span ends): tool spans before their
 * `invoke_agent` ancestor, the ancestor first, or two ancestors naming different conversations
 * (lib/otlp/trace-links.itest.ts). Prints `{"traces": [...], "exports": [...], "toolSpans": {…}}`: the trace ids it exported,
 * each export's result, and each tool call's span id by its call id.
 */
import { context, trace, SpanStatusCode } from "@opentelemetry/api";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, SimpleSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter, type SpanProcessor } from "@opentelemetry/sdk-trace";
import { LegacyOpenTelemetry, OpenTelemetry } from "@ai-sdk/otel";
import { generateText, registerTelemetry, stepCountIs, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";

const [mode, tag] = process.argv.slice(2);
if (!mode || !tag) throw new Error("usage: agent-run.ts sdk-proto|sdk-json|ai-sdk|ai-sdk-legacy|simple-tool-first|simple-agent-first|simple-changed TAG");
const simple = mode.startsWith("simple-");

/** Notes the trace ids that were exported (so the test knows which operations to look for). */
const traces = new Set<string>();
/** Each tool call's span id, by its gen_ai.tool.call.id (what a verdict event is parented to). */
const toolSpans: Record<string, string> = {};
const traceIds: SpanProcessor = {
  onStart: () => {},
  onEnd: (span: ReadableSpan) => {
    traces.add(span.spanContext().traceId);
    const callId = span.attributes["gen_ai.tool.call.id"];
    if (typeof callId === "string") toolSpans[callId] = span.spanContext().spanId;
  },
  forceFlush: async () => {},
  shutdown: async () => {},
};

const otlp = mode === "sdk-json" ? new JsonExporter() : new ProtoExporter();
/** The exporter's own answers, passed through unchanged and noted (the SDK reports failures nowhere else). */
const exports: { code: number; error?: string }[] = [];
/** The names of the spans of each export, in order. */
const exported: string[][] = [];
const exporter: SpanExporter = {
  export: (spans, done) =>
    otlp.export(spans, (result) => {
      exported.push(spans.map((s) => s.name));
      exports.push({ code: result.code, ...(result.error ? { error: String(result.error) } : {}) });
      done(result);
    }),
  shutdown: () => otlp.shutdown(),
  forceFlush: () => otlp.forceFlush(),
};
const provider = new TracerProvider({
  resource: resourceFromAttributes({ "service.name": `otlp-itest-${tag}` }),
  spanProcessors: [traceIds, simple ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter })],
});
const tracer = provider.getTracer("reconcile-otlp-itest");

async function sdkAgent() {
  const root = tracer.startSpan("invoke_agent support", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": `support-${tag}`, "gen_ai.conversation.id": `conv-${tag}` } });
  const inRoot = trace.setSpan(context.active(), root);
  const chat = tracer.startSpan("chat model", { attributes: { "gen_ai.operation.name": "chat" } }, inRoot);
  chat.end();
  const refund = tracer.startSpan("execute_tool refund_order", {
    attributes: {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "refund_order",
      "gen_ai.tool.call.id": `${tag}-refund`,
      "gen_ai.tool.type": "function",
      "gen_ai.tool.call.arguments": JSON.stringify({ order: "5531", amount_cents: 4200 }),
    },
  }, inRoot);
  refund.setAttribute("gen_ai.tool.call.result", JSON.stringify({ refund_id: `rf-${tag}`, status: "issued" }));
  refund.setStatus({ code: SpanStatusCode.OK });
  refund.end();
  const timedOut = tracer.startSpan("execute_tool refund_order", {
    attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "refund_order", "gen_ai.tool.call.id": `${tag}-timeout`, "gen_ai.tool.call.arguments": JSON.stringify({ order: "5532" }) },
  }, inRoot);
  timedOut.setAttribute("error.type", "timeout");
  timedOut.setStatus({ code: SpanStatusCode.ERROR, message: "no answer within 30 s" });
  timedOut.end();
  root.end();
}

async function aiSdkAgent(legacy: boolean) {
  registerTelemetry(legacy ? new LegacyOpenTelemetry({ tracer }) : new OpenTelemetry({ tracer }));
  const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };
  const model = new MockLanguageModelV4({
    doGenerate: [
      {
        content: [
          { type: "tool-call", toolCallId: `${tag}-post-1`, toolName: "publishPost", input: JSON.stringify({ text: "We shipped receipts" }) },
          { type: "tool-call", toolCallId: `${tag}-post-2`, toolName: "publishPost", input: JSON.stringify({ text: "duplicate" }) },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      },
      { content: [{ type: "text", text: "Posted." }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] },
    ],
  });
  await generateText({
    model,
    prompt: "Post our news",
    stopWhen: stepCountIs(3),
    telemetry: { functionId: `publisher-${tag}` },
    tools: {
      publishPost: tool({
        description: "Publishes a post",
        inputSchema: z.object({ text: z.string() }),
        execute: async ({ text }) => (text === "duplicate" ? { success: false, error: { code: "duplicate", message: "status is a duplicate" } } : { accepted: true, post_id: `p-${tag}` }),
      }),
    },
  });
}

/** Ends a span, and waits until SimpleSpanProcessor's export of it was answered. */
async function endAndExport(span: ReturnType<typeof tracer.startSpan>) {
  span.end();
  await provider.forceFlush();
}

function toolSpan(name: string, callId: string, parent: ReturnType<typeof tracer.startSpan>) {
  const t = tracer.startSpan(`execute_tool ${name}`, {
    attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": callId, "gen_ai.tool.call.arguments": JSON.stringify({ order: "5531" }) },
  }, trace.setSpan(context.active(), parent));
  t.setAttribute("gen_ai.tool.call.result", JSON.stringify({ ok: true }));
  return t;
}

const agentSpan = (agent: string, conversation: string, parent?: ReturnType<typeof tracer.startSpan>) =>
  tracer.startSpan(`invoke_agent ${agent}`, { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent, "gen_ai.conversation.id": conversation } }, parent ? trace.setSpan(context.active(), parent) : undefined);

/** The usual order with SimpleSpanProcessor: the tool calls end, and are exported, before the agent's span. */
async function toolsFirst() {
  const root = agentSpan(`support-${tag}`, `conv-${tag}`);
  await endAndExport(toolSpan("lookup_order", `${tag}-lookup`, root));
  await endAndExport(toolSpan("refund_order", `${tag}-refund`, root));
  await endAndExport(root);
}

/** The agent's span ends before a tool call it started (a call left running). */
async function agentFirst() {
  const root = agentSpan(`support-${tag}`, `conv-${tag}`);
  const late = toolSpan("refund_order", `${tag}-late`, root);
  await endAndExport(root);
  await endAndExport(late);
}

/** A nested agent names one conversation, its parent (exported later) another: the first to arrive wins. */
async function changedConversation() {
  const root = agentSpan(`planner-${tag}`, `conv-${tag}-second`);
  const inner = agentSpan(`support-${tag}`, `conv-${tag}-first`, root);
  await endAndExport(toolSpan("refund_order", `${tag}-refund`, inner));
  await endAndExport(inner);
  await endAndExport(root);
}

if (mode === "simple-tool-first") await toolsFirst();
else if (mode === "simple-agent-first") await agentFirst();
else if (mode === "simple-changed") await changedConversation();
else if (mode === "sdk-proto" || mode === "sdk-json") await sdkAgent();
else if (mode === "ai-sdk" || mode === "ai-sdk-legacy") await aiSdkAgent(mode === "ai-sdk-legacy");
else throw new Error(`unknown mode ${mode}`);
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ traces: [...traces], exports, exported, toolSpans }));
