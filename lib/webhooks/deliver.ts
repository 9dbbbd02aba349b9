import "server-only";
import { perProject } from "@/lib/store/db/project-context";
import { serverSecret } from "@/lib/crypto/server-secret";
import { cut } from "@/lib/domain/json";
import { afterAttempt, ATTEMPT_TIMEOUT_MS, scheduleScale } from "@/lib/domain/webhooks/schedule";
import { stillAccepted } from "@/lib/domain/webhooks/rotation";
import { openSecret, signedHeaders } from "@/lib/domain/webhooks/signing";
import { currentProjectId } from "@/lib/store/db/project-context";
import { slackMessage } from "@/lib/domain/webhooks/slack";
import type { AnyEventType } from "@/lib/domain/webhooks/events";
import { guardedRequest, outboundPolicy, OutboundRefused, type OutboundResponse } from "@/lib/outbound/guarded-request";
import { sqlWriteTransaction, writeTransaction } from "@/lib/store/db/db";
import type { Sql, SqlLike } from "@/lib/store/db/sql";
import { finishJob, LeaseLost, retryJob, type Job } from "@/lib/store/work/jobs";
import { countDelivery } from "@/lib/observability/metrics";
import { cancelDelivery, deliveryForSending, dropExpiredPreviousSecret, recordAttempt } from "@/lib/store/settings/webhooks";
import type { DeliveryJob } from "@/lib/store/work/webhook-outbox";

/**
 * Sends one delivery (one message to one endpoint): the job handler of kind "webhook". Each
 * attempt goes through the guarded client (SSRF rules as for verifiers) and is recorded with its
 * status, latency and an excerpt of the answer, in the transaction that also ends the job (or
 * before the job is given back for the next attempt).
 */

const EXCERPT = 500;
/** How much of a receiver's answer is read at all. */
const MAX_RESPONSE_BYTES = 64 * 1024;


/** The body an endpoint receives: the event JSON, or Slack's `{"text"}` with the link. */
export function bodyFor(format: string, message: { type: string; body: string; link: string }): string {
  if (format !== "slack") return message.body;
  const parsed = JSON.parse(message.body) as { data: Record<string, unknown> };
  return JSON.stringify(slackMessage({ type: message.type as AnyEventType, data: parsed.data, link: message.link }));
}

type Tx = Sql;
type Ending = { job: Job; record: (tx: Tx) => Promise<void>; status: "done" | "failed"; error?: string; settle: (e?: unknown) => void };

/**
 * Results are committed in groups: every delivery that ended while the last commit ran is
 * recorded (its attempt, and finishJob) in the next transaction. Each commit is a disk sync, and
 * on SQLite it holds the one write lock that ingest needs too; one per delivery capped delivery
 * at about a hundred a second and slowed ingest meanwhile (docs/BENCHMARKS.md). A job whose
 * lease another worker took (LeaseLost) is left out of the group: what that worker records counts.
 */
/** A project's endings wait for its own transaction (project-context.ts): a group is one database's. */
const batch = perProject("webhook-endings", () => ({ endings: [] as Ending[], flushing: false, timer: null as NodeJS.Timeout | null }));

async function flush(): Promise<void> {
  const b = batch();
  if (b.flushing) return;
  b.flushing = true;
  try {
    while (b.endings.length) {
      const group = b.endings.splice(0, 200);
      try {
        await sqlWriteTransaction(async (tx) => {
          for (const e of group) {
            try {
              await finishJob(tx, e.job, { status: e.status, error: e.error });
            } catch (err) {
              // Nothing was written for this job: finishJob changes a row only for the lease's holder.
              if (err instanceof LeaseLost) continue;
              throw err;
            }
            await e.record(tx);
          }
        });
        for (const e of group) e.settle();
      } catch (err) {
        for (const e of group) e.settle(err);
      }
    }
  } finally {
    b.flushing = false;
  }
}

/**
 * How long an ending waits for others to join its group. better-sqlite3 commits (and syncs the
 * disk) on the server's one thread, so a group of one per delivery left the thread no time for
 * anything else: waiting 5 ms lets the deliveries running meanwhile end together (a profile of
 * the server showed commits taking most of its time at ~90 deliveries/s).
 */
const GROUP_WAIT_MS = 5;
function endJob(job: Job, record: (tx: Tx) => Promise<void>, status: "done" | "failed", error?: string): Promise<void> {
  const b = batch();
  return new Promise<void>((resolve, reject) => {
    b.endings.push({ job, record, status, error, settle: (e) => (e === undefined ? resolve() : reject(e)) });
    b.timer ??= setTimeout(() => {
      b.timer = null;
      void flush();
    }, GROUP_WAIT_MS);
  });
}

const none = async () => {};

export async function deliverWebhook(job: Job): Promise<void> {
  const d = job.payload as DeliveryJob;
  const found = await deliveryForSending(d);
  if (!found) return endJob(job, none, "failed", "the message no longer exists");
  const { message, delivery, endpoint } = found;
  if (delivery && delivery.status !== "pending") return endJob(job, none, "done");
  if (!endpoint) return endJob(job, none, "failed", "the endpoint was deleted");
  if (!endpoint.enabled && message.type !== "webhook.test") {
    const reason = "not sent: the endpoint is disabled";
    return endJob(job, (tx) => cancelDelivery(tx, d, reason), "failed", reason);
  }

  const n = (delivery?.attempts ?? 0) + 1;
  const body = bodyFor(endpoint.format, message);
  const at = new Date();
  // While a rotation's overlap lasts, the replaced secret signs too (a second signature); after
  // it, it is ignored, and cleared from the row with this attempt's record.
  const previous = endpoint.previous;
  const overlapping = previous !== null && stillAccepted(previous.until, at);
  const secrets = [openSecret(endpoint.secretSealed, serverSecret(), currentProjectId()), ...(overlapping ? [openSecret(previous.sealed, serverSecret(), currentProjectId())] : [])];
  const headers = {
    ...signedHeaders(secrets, message.id, at, body),
    "content-type": "application/json",
    "user-agent": "Reconcile-Webhooks/1",
  };
  const started = performance.now();
  let res: OutboundResponse | null = null;
  let error: string | null = null;
  try {
    const host = new URL(endpoint.url).hostname;
    res = await guardedRequest(
      { method: "POST", url: endpoint.url, headers, body },
      outboundPolicy("webhook", [host], { timeoutMs: ATTEMPT_TIMEOUT_MS, maxBytes: MAX_RESPONSE_BYTES }),
    );
  } catch (e) {
    error = e instanceof OutboundRefused ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
  }
  const ms = Math.round(res?.ms ?? performance.now() - started);
  const status = res?.status ?? null;
  if (res && (status! < 200 || status! >= 300)) error = `the receiver answered ${status}`;
  const excerpt = res ? cut(res.body.subarray(0, EXCERPT * 4).toString("utf8"), EXCERPT) : (error ?? "");
  const attempt = { n, at: at.toISOString(), statusCode: status, ms, excerpt, error };
  const now = Date.now();
  const record = async (tx: SqlLike, next: Parameters<typeof recordAttempt>[3]) => {
    await recordAttempt(tx, d, attempt, next);
    if (previous && !overlapping) await dropExpiredPreviousSecret(tx, endpoint.id, at.toISOString());
  };
  const verdict = afterAttempt(n, status, { now, retryAfter: res?.headers["retry-after"], scale: scheduleScale(process.env.RECONCILE_WEBHOOK_SCHEDULE_SCALE) });

  countDelivery(verdict.kind);
  switch (verdict.kind) {
    case "delivered":
      return endJob(job, (tx) => record(tx, { status: "delivered" }), "done");
    case "gone": {
      const reason = `disabled: the receiver answered 410 Gone at ${at.toISOString()}`;
      return endJob(job, (tx) => record(tx, { status: "failed", disableEndpoint: { id: endpoint.id, reason } }), "failed", reason);
    }
    case "failed":
      return endJob(job, (tx) => record(tx, { status: "failed" }), "failed", `${error ?? "failed"} (after ${n} attempts)`);
    case "retry":
      await writeTransaction((tx) => record(tx, { status: "pending", nextAt: new Date(verdict.at).toISOString() }));
      await retryJob(job, verdict.at, error ?? "not delivered");
  }
}
