import "server-only";
import { currentProjectSlug } from "../db/project-context";
import { randomUUID } from "node:crypto";
import type { ChainRecord, ChainVerdict } from "@/lib/domain/hash";
import type { OperationState } from "@/lib/domain/operation";
import type { EffectiveOutcome } from "@/lib/domain/outcomes";
import { eventBody } from "@/lib/domain/webhooks/body";
import { endpointFiltersSchema, wants, type EndpointFilters } from "@/lib/domain/webhooks/endpoint";
import { chainFailedEvent, checkpointEvent, correctionEvent, operationEvents, type CorrectionData, type Links, type OutcomeChange, type WebhookEvent } from "@/lib/domain/webhooks/events";
import { keyFingerprint, type Checkpoint } from "@/lib/domain/checkpoint";
import { writeTransaction } from "../db/db";
import { enqueueJobs } from "./jobs";
import { asSql, insertMany, type SqlLike } from "../db/sql";

/**
 * The durable outbox. Called INSIDE the write transaction of the change an event announces
 * (ingest, a correction, a checkpoint): the message, one delivery per subscribed endpoint and
 * one job per delivery commit with the change or not at all. An event no enabled endpoint
 * wants is not kept.
 */
export const WEBHOOK_JOB_KIND = "webhook";

/** Links in events: RECONCILE_PUBLIC_URL (the address people open Reconcile at), else a path; in the event's project (`/p/{slug}`). */
export function publicLinks(): Links {
  const slug = currentProjectSlug();
  return { base: `${process.env.RECONCILE_PUBLIC_URL ?? ""}${slug ? `/p/${slug}` : ""}` };
}

type EndpointRow = { id: string; filters: string };
const filterCache = new Map<string, EndpointFilters>();
function filtersOf(row: EndpointRow): EndpointFilters {
  let f = filterCache.get(row.filters);
  if (!f) {
    if (filterCache.size > 1000) filterCache.clear();
    f = endpointFiltersSchema.parse(JSON.parse(row.filters));
    filterCache.set(row.filters, f);
  }
  return f;
}

/** A delivery's job: its payload names the delivery (a row written at its first attempt), the message and the endpoint. */
export type DeliveryJob = { delivery_id: string; message_id: string; endpoint_id: string };
export const deliveryJob = (messageId: string, endpointId: string, due = Date.now()) => {
  const payload: DeliveryJob = { delivery_id: randomUUID(), message_id: messageId, endpoint_id: endpointId };
  return { kind: WEBHOOK_JOB_KIND, key: `webhook:${payload.delivery_id}`, payload, dueAt: due };
};

/**
 * Writes the messages some enabled endpoint wants, and one job per (message, endpoint). The
 * job is the durable delivery; its row in the delivery log is written with its first attempt
 * (immediately, while the worker runs), which keeps this transaction to one row per message
 * and one per endpoint.
 */
export async function announce(db: SqlLike, events: WebhookEvent[]): Promise<number> {
  if (!events.length) return 0;
  const tx = asSql(db);
  const endpoints = await tx.all<EndpointRow>("SELECT id, filters FROM webhook_endpoints WHERE enabled = TRUE");
  if (!endpoints.length) return 0;
  const now = new Date().toISOString();
  const messages: unknown[][] = [];
  const jobs: ReturnType<typeof deliveryJob>[] = [];
  const due = Date.now();
  for (const event of events) {
    const to = endpoints.filter((e) => wants(filtersOf(e), event));
    if (!to.length) continue;
    const id = `msg_${randomUUID()}`;
    messages.push([id, event.type, eventBody(event), event.link, event.operationId, now]);
    for (const e of to) jobs.push(deliveryJob(id, e.id, due));
  }
  if (!messages.length) return 0;
  await insertMany(tx, "webhook_messages", ["id", "type", "body", "link", "operation_id", "created_at"], messages);
  await enqueueJobs(tx, jobs);
  return messages.length;
}

/**
 * Ingest's announcement: for each operation whose projection this transaction rewrote, its
 * effective outcome before (null: created here) and after, caused by its last new stage record.
 */
export async function announceStages(
  db: SqlLike,
  appended: Pick<ChainRecord, "seq" | "operation_id" | "recorded_at" | "actor" | "payload">[],
  states: Map<string, OperationState>,
  before: Map<string, EffectiveOutcome>,
): Promise<void> {
  const last = new Map<string, (typeof appended)[number]>();
  for (const r of appended) if (r.operation_id) last.set(r.operation_id, r);
  const links = publicLinks();
  const events: WebhookEvent[] = [];
  for (const [id, r] of last) {
    const after = states.get(id);
    if (!after) continue;
    const change: OutcomeChange = {
      operationId: id,
      before: before.get(id) ?? null,
      after,
      cause: { kind: "stage", stage: String((r.payload as { stage?: unknown }).stage), seq: r.seq, by: r.actor },
      at: r.recorded_at,
    };
    events.push(...operationEvents(change, links));
  }
  await announce(db, events);
}

/** A correction's announcement: correction.created, and the verdict events it causes. */
export async function announceCorrection(db: SqlLike, operationId: string, before: EffectiveOutcome, after: OperationState, correction: CorrectionData): Promise<void> {
  const links = publicLinks();
  const change: OutcomeChange = {
    operationId,
    before,
    after,
    cause: { kind: "correction", action: correction.action, correction_id: correction.id, seq: correction.seq, by: correction.reviewer },
    at: correction.recorded_at,
  };
  await announce(db, [correctionEvent(operationId, correction, after, links), ...operationEvents(change, links)]);
}

/** A signed checkpoint's announcement, in the transaction that stores it. */
export async function announceCheckpoint(db: SqlLike, c: Checkpoint): Promise<void> {
  await announce(db, [checkpointEvent(c, keyFingerprint(c.key), publicLinks())]);
}

/**
 * A verification of the stored chain found a broken link (or a checkpoint it no longer
 * matches): announced in a transaction of its own (verification writes nothing else).
 * Never fails the verification that found it.
 */
export async function announceChainFailure(v: { badSeq: number | null; problem: string; checked: number }, by: string | null, trail: "project" | "instance" = "project"): Promise<void> {
  try {
    await writeTransaction((tx) => announce(tx, [chainFailedEvent(v, new Date().toISOString(), by, publicLinks(), trail)]));
  } catch (e) {
    console.error("could not record the chain.verification_failed webhook:", e);
  }
}

/** What chain.verification_failed says of a failed verification: the chain's own first bad seq, else the first checkpoint's. */
export function chainFailure(verdict: ChainVerdict, checkpoint?: { ok: boolean; problem?: string; badSeq?: number }) {
  if (!verdict.ok) return { badSeq: verdict.badSeq, problem: verdict.problem, checked: verdict.count };
  return { badSeq: checkpoint?.badSeq ?? null, problem: checkpoint?.problem ?? "a checkpoint does not match", checked: verdict.count };
}
