import "server-only";
import { ROOT_CONTEXT, TraceFlags, trace } from "@opentelemetry/api";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { LoggerProvider, type LogRecordProcessor, type ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { EVALUATION_EVENT, type VerdictEvent } from "@/lib/domain/verdicts/event";
import { afterAttempt, scheduleScale } from "@/lib/domain/webhooks/schedule";
import { checkedLookup, checkUrl, OutboundRefused } from "@/lib/outbound/guarded-request";
import { writeTransaction } from "@/lib/store/db/db";
import { finishJob, giveBackJob, LeaseLost, type Job } from "@/lib/store/work/jobs";
import { pendingVerdicts, recordVerdictAttempt, type VerdictJob } from "@/lib/store/work/verdict-outbox";
import { verdictTarget, type VerdictTarget } from "./target";

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

export async function exportVerdicts(job: Job): Promise<void> {
  const { ids } = job.payload as VerdictJob;
  const end = async (fn: Parameters<typeof writeTransaction<void>>[0]): Promise<void> => {
    try {
      await writeTransaction(fn);
    } catch (e) {
      // Taken over by another claim: what that one records counts.
      if (!(e instanceof LeaseLost)) throw e;
    }
  };
  const events = await pendingVerdicts(ids);
  if (!events.length) return end((tx) => finishJob(tx, job, { status: "done" }));
  const target = verdictTarget();
  const n = Math.max(...events.map((e) => e.attempts)) + 1;
  const sent = target ? await send(target, logRecordsOf(events.map((e) => e.event))) : { error: "not sent: RECONCILE_VERDICT_OTLP_ENDPOINT is not set", status: null };
  const pending = events.map((e) => e.id);
  if (!sent.error) {
    return end(async (tx) => {
      await finishJob(tx, job, { status: "done" });
      await recordVerdictAttempt(tx, pending, { status: "delivered", error: null });
    });
  }
  const next = afterAttempt(n, sent.status, { now: Date.now(), scale: scheduleScale(process.env.RECONCILE_WEBHOOK_SCHEDULE_SCALE) });
  if (next.kind === "retry") {
    return end(async (tx) => {
      if (await giveBackJob(tx, job, next.at, sent.error!)) await recordVerdictAttempt(tx, pending, { status: "pending", error: sent.error });
    });
  }
  const error = `${sent.error} (after ${n} attempts)`;
  return end(async (tx) => {
    await finishJob(tx, job, { status: "failed", error });
    await recordVerdictAttempt(tx, pending, { status: "failed", error });
  });
}
