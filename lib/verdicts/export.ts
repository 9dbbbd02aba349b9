import "server-only";
import { ROOT_CONTEXT, TraceFlags, trace } from "@opentelemetry/api";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { LoggerProvider, type LogRecordProcessor, type ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { EVALUATION_EVENT, type VerdictEvent } from "@/lib/domain/verdicts/event";
import { needsSpan, TARGET_SETTING, type VerdictTargetKind } from "@/lib/domain/verdicts/targets";
import { afterAttempt, RETRY_SCHEDULE_MS, scheduleScale, type AttemptVerdict } from "@/lib/domain/webhooks/schedule";
import { checkedLookup, checkUrl, OutboundRefused } from "@/lib/outbound/guarded-request";
import { writeTransaction } from "@/lib/store/db/db";
import { finishJob, giveBackJob, LeaseLost, type Job } from "@/lib/store/work/jobs";
import { pendingVerdicts, recordVerdictAttempt, supersededVerdicts, type PendingVerdict, type VerdictJob } from "@/lib/store/work/verdict-outbox";
import { sendToLangfuse } from "./langfuse";
import { sendToPhoenix } from "./phoenix";
import { authRefused, type SendResult } from "./send-result";
import { langfuseTarget, phoenixTarget, verdictTarget, type VerdictTarget } from "./target";

/**
 * Sends verdict events (docs/API.md "Verdicts out"): the job handler of kind "verdict.export".
 * The events are OpenTelemetry log records made by the SDK's own LoggerProvider and sent by the
 * SDK's own OTLP/HTTP protobuf exporter (`@opentelemetry/exporter-logs-otlp-proto`), to
 * RECONCILE_VERDICT_OTLP_ENDPOINT with the headers of RECONCILE_VERDICT_OTLP_HEADERS (the format
 * of OTEL_EXPORTER_OTLP_HEADERS). The exporter's requests keep the outbound rules: the URL is
 * checked as the guarded client checks one (https only unless RECONCILE_VERDICT_ALLOW_HTTP=1, the
 * endpoint's host alone), its agent connects only to addresses the guarded client's lookup
 * allows (no private ones unless RECONCILE_VERDICT_ALLOW_PRIVATE=1), and the exporter follows no
 * redirect, has a deadline and reads at most 4 MB of an answer.
 *
 * A job's events go in one request; its attempts follow the webhook schedule (ten attempts over
 * about three days; RECONCILE_WEBHOOK_SCHEDULE_SCALE shortens it in tests), each recorded on the
 * events' rows with the job's end in one transaction.
 *
 * A job for Phoenix or Langfuse (its payload's `target`) sends the same events as span annotations
 * (./phoenix.ts) or scores (./langfuse.ts) with the vendor's own client. There an operation has one
 * annotation or score, replaced by each verdict, so an event a later one of the same operation
 * replaces is recorded `superseded` and not sent (a retried older verdict never overwrites a newer
 * one). Credentials refused (401/403) are never given up: the events stay pending, tried again on
 * the schedule and then at its last interval, until a restart with a key that works sends them.
 */

/** The records the SDK makes, kept for one export instead of handed to a batching processor. */
class Collect implements LogRecordProcessor {
  records: ReadableLogRecord[] = [];
  onEmit(record: ReadableLogRecord): void {
    this.records.push(record);
  }
  forceFlush = async () => {};
  shutdown = async () => {};
}

/** The events as OpenTelemetry log records, each in its trace under its span. */
export function logRecordsOf(events: VerdictEvent[]): ReadableLogRecord[] {
  const collect = new Collect();
  const provider = new LoggerProvider({ resource: resourceFromAttributes({ "service.name": "reconcile" }), processors: [collect] });
  const logger = provider.getLogger("reconcile.verdicts");
  for (const e of events) {
    const context = trace.setSpanContext(ROOT_CONTEXT, { traceId: e.trace_id, spanId: e.span_id, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    logger.emit({ eventName: EVALUATION_EVENT, timestamp: new Date(e.time), observedTimestamp: new Date(), attributes: e.attributes, context });
  }
  return collect.records;
}

type Exporter = { key: string; exporter: OTLPLogExporter };
let cached: Exporter | null = null;

function exporterFor(target: VerdictTarget): OTLPLogExporter {
  const key = JSON.stringify([target.url, target.headers, target.timeoutMs, target.policy.allowPrivate]);
  if (cached?.key === key) return cached.exporter;
  void cached?.exporter.shutdown();
  const lookup = checkedLookup(target.policy.allowPrivate);
  const exporter = new OTLPLogExporter({
    url: target.url,
    headers: target.headers,
    timeoutMillis: target.timeoutMs,
    httpAgentOptions: async (protocol: string) => {
      const lib = protocol === "https:" ? await import("node:https") : await import("node:http");
      return new lib.Agent({ keepAlive: true, lookup: lookup as never });
    },
  });
  cached = { key, exporter };
  return exporter;
}

/** Sends the records; resolves with the error the export met (null: delivered) and the receiver's status when one answered. */
async function send(target: VerdictTarget, records: ReadableLogRecord[]): Promise<{ error: string | null; status: number | null }> {
  try {
    checkUrl(target.url, target.policy);
  } catch (e) {
    return { error: e instanceof OutboundRefused ? `${e.code}: ${e.message}` : String(e), status: null };
  }
  const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporterFor(target).export(records, resolve));
  if (result.code === 0) return { error: null, status: 200 };
  const err = result.error as (Error & { code?: unknown; data?: unknown }) | undefined;
  const status = typeof err?.code === "number" ? err.code : null;
  const said = typeof err?.data === "string" && err.data ? `: ${err.data.slice(0, 300)}` : "";
  return { error: status ? `the receiver answered ${status}${said}` : (err?.message ?? "the export failed"), status };
}

/** Sends the events to the job's target; the error when the target is no longer configured. */
async function sendTo(kind: VerdictTargetKind, events: PendingVerdict[]): Promise<SendResult> {
  const unset = { error: `not sent: ${TARGET_SETTING[kind]} is not set`, status: null };
  if (kind === "phoenix") {
    const t = phoenixTarget();
    return t ? sendToPhoenix(t, events.map((e) => e.event)) : unset;
  }
  if (kind === "langfuse") {
    const t = langfuseTarget();
    return t ? sendToLangfuse(t, events.map((e) => e.event)) : unset;
  }
  const target = verdictTarget();
  return target ? send(target, logRecordsOf(events.map((e) => e.event))) : unset;
}

/** What follows attempt `n`: the webhook schedule, except refused credentials, retried at its last interval at most, never failed. */
function nextAfter(n: number, status: number | null): AttemptVerdict {
  const now = Date.now();
  const scale = scheduleScale(process.env.RECONCILE_WEBHOOK_SCHEDULE_SCALE);
  if (authRefused(status)) {
    const wait = RETRY_SCHEDULE_MS[Math.min(n, RETRY_SCHEDULE_MS.length - 1)] * scale * (0.9 + 0.2 * Math.random());
    return { kind: "retry", at: now + Math.round(wait) };
  }
  return afterAttempt(n, status, { now, scale });
}

export async function exportVerdicts(job: Job): Promise<void> {
  const { ids, target: kind = "otlp" } = job.payload as VerdictJob;
  const end = async (fn: Parameters<typeof writeTransaction<void>>[0]): Promise<void> => {
    try {
      await writeTransaction(fn);
    } catch (e) {
      // Taken over by another claim: what that one records counts.
      if (!(e instanceof LeaseLost)) throw e;
    }
  };
  let events = await pendingVerdicts(ids);
  const superseded = needsSpan(kind) ? [...(await supersededVerdicts(kind, events))] : [];
  const recordSuperseded = (tx: Parameters<typeof recordVerdictAttempt>[0]) =>
    recordVerdictAttempt(tx, superseded, { status: "superseded", error: "not sent: a later verdict of this operation replaces it" });
  events = events.filter((e) => !superseded.includes(e.id));
  if (!events.length) {
    return end(async (tx) => {
      await finishJob(tx, job, { status: "done" });
      await recordSuperseded(tx);
    });
  }
  const n = Math.max(...events.map((e) => e.attempts)) + 1;
  const sent = await sendTo(kind, events);
  const pending = events.map((e) => e.id);
  if (!sent.error) {
    return end(async (tx) => {
      await finishJob(tx, job, { status: "done" });
      await recordSuperseded(tx);
      await recordVerdictAttempt(tx, pending, { status: "delivered", error: null });
    });
  }
  const next = nextAfter(n, sent.status);
  if (next.kind === "retry") {
    return end(async (tx) => {
      if (await giveBackJob(tx, job, next.at, sent.error!)) {
        await recordSuperseded(tx);
        await recordVerdictAttempt(tx, pending, { status: "pending", error: sent.error });
      }
    });
  }
  const error = `${sent.error} (after ${n} attempts)`;
  return end(async (tx) => {
    await finishJob(tx, job, { status: "failed", error });
    await recordSuperseded(tx);
    await recordVerdictAttempt(tx, pending, { status: "failed", error });
  });
}
