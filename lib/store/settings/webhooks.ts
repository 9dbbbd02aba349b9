import "server-only";
import { randomUUID } from "node:crypto";
import { endpointFiltersSchema, type EndpointCreate, type EndpointFormat, type EndpointUpdate } from "@/lib/domain/webhooks/endpoint";
import type { Attempt, Delivery, Endpoint } from "@/lib/views/webhooks";

export type { Attempt, Delivery, Endpoint };
import { eventBody } from "@/lib/domain/webhooks/body";
import { stillAccepted } from "@/lib/domain/webhooks/rotation";
import type { WebhookEvent } from "@/lib/domain/webhooks/events";
import { reader, writeTransaction } from "../db/db";
import type { Tx } from "../db/database";
import { StoreError } from "../errors";
import { enqueueJobs } from "../work/jobs";
import { asSql, insertMany, placeholder, type SqlLike } from "../db/sql";
import { deliveryJob, type DeliveryJob } from "../work/webhook-outbox";

/** Webhook endpoints and their delivery log (storage only: sending is lib/webhooks). */

type EndpointRecord = {
  id: string;
  url: string;
  description: string;
  format: string;
  filters: string;
  secretHint: string;
  previousSecretHint: string | null;
  previousSecretExpiresAt: string | null;
  secretRotatedAt: string | null;
  enabled: boolean;
  disabledReason: string | null;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
};

const toEndpoint = (r: EndpointRecord): Endpoint => ({
  id: r.id,
  url: r.url,
  description: r.description,
  format: r.format as EndpointFormat,
  filters: endpointFiltersSchema.parse(JSON.parse(r.filters)),
  secret_hint: r.secretHint,
  secret_rotated_at: r.secretRotatedAt,
  // An expired previous secret no longer signs, whether or not its row was cleared yet.
  previous_secret:
    r.previousSecretHint && r.previousSecretExpiresAt && stillAccepted(r.previousSecretExpiresAt, new Date())
      ? { hint: r.previousSecretHint, accepted_until: r.previousSecretExpiresAt }
      : null,
  enabled: r.enabled,
  disabled_reason: r.disabledReason,
  created_by: r.createdBy,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

/** At most this many endpoints: each one is a delivery per event. */
export const MAX_ENDPOINTS = 100;

export async function listEndpoints(): Promise<Endpoint[]> {
  const db = await reader();
  return (await db.webhookEndpoint.findMany({ orderBy: { createdAt: "asc" } })).map(toEndpoint);
}

export async function getEndpoint(id: string): Promise<Endpoint> {
  const db = await reader();
  const row = await db.webhookEndpoint.findUnique({ where: { id } });
  if (!row) throw new StoreError("not_found", `no webhook endpoint with the id ${JSON.stringify(id)}`);
  return toEndpoint(row);
}

export async function createEndpoint(input: EndpointCreate, secret: { sealed: string; hint: string }, by: string): Promise<Endpoint> {
  return writeTransaction(async (tx) => {
    if ((await tx.webhookEndpoint.count()) >= MAX_ENDPOINTS) throw new StoreError("conflict", `at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`);
    const now = new Date().toISOString();
    const row = await tx.webhookEndpoint.create({
      data: {
        id: `ep_${randomUUID()}`,
        url: input.url,
        description: input.description,
        format: input.format,
        filters: JSON.stringify(input.filters),
        secretSealed: secret.sealed,
        secretHint: secret.hint,
        enabled: input.enabled,
        createdBy: by,
        createdAt: now,
        updatedAt: now,
      },
    });
    return toEndpoint(row);
  });
}

export async function updateEndpoint(id: string, patch: EndpointUpdate & { disabledReason?: string | null }): Promise<Endpoint> {
  return writeTransaction(async (tx) => {
    const row = await tx.webhookEndpoint.findUnique({ where: { id } });
    if (!row) throw new StoreError("not_found", `no webhook endpoint with the id ${JSON.stringify(id)}`);
    const enabled = patch.enabled ?? row.enabled;
    const now = new Date().toISOString();
    // An old secret whose overlap ended goes with any edit, as with the next delivery.
    await dropExpiredPreviousSecret(tx, id, now);
    const updated = await tx.webhookEndpoint.update({
      where: { id },
      data: {
        url: patch.url ?? row.url,
        description: patch.description ?? row.description,
        format: patch.format ?? row.format,
        filters: patch.filters ? JSON.stringify(patch.filters) : row.filters,
        enabled,
        // Enabling again clears why it was disabled.
        disabledReason: enabled ? null : (patch.disabledReason ?? row.disabledReason ?? "disabled by an admin"),
        updatedAt: now,
      },
    });
    return toEndpoint(updated);
  });
}

/**
 * A new signing secret for the endpoint. The one it replaces keeps signing until `previousUntil`
 * (null: dropped at once); a secret replaced by an earlier rotation is dropped now (only the
 * last one replaced overlaps).
 */
export async function rotateEndpointSecret(id: string, secret: { sealed: string; hint: string }, previousUntil: string | null, now: Date): Promise<Endpoint> {
  return writeTransaction(async (tx) => {
    const row = await tx.webhookEndpoint.findUnique({ where: { id } });
    if (!row) throw new StoreError("not_found", `no webhook endpoint with the id ${JSON.stringify(id)}`);
    const at = now.toISOString();
    const updated = await tx.webhookEndpoint.update({
      where: { id },
      data: {
        secretSealed: secret.sealed,
        secretHint: secret.hint,
        previousSecretSealed: previousUntil ? row.secretSealed : null,
        previousSecretHint: previousUntil ? row.secretHint : null,
        previousSecretExpiresAt: previousUntil,
        secretRotatedAt: at,
        updatedAt: at,
      },
    });
    return toEndpoint(updated);
  });
}

/** Clears a previous secret whose overlap ended by `now` (not one a rotation since then put there), in the caller's transaction. */
export async function dropExpiredPreviousSecret(db: SqlLike, id: string, now: string): Promise<void> {
  const p = placeholder;
  await asSql(db).run(
    `UPDATE webhook_endpoints SET previous_secret_sealed = NULL, previous_secret_hint = NULL, previous_secret_expires_at = NULL
     WHERE id = ${p(1)} AND previous_secret_expires_at IS NOT NULL AND previous_secret_expires_at <= ${p(2)}`,
    [id, now],
  );
}

/** Deletes the endpoint with its delivery log; its pending jobs find nothing and end. */
export async function deleteEndpoint(id: string): Promise<void> {
  await writeTransaction(async (tx) => {
    const row = await tx.webhookEndpoint.findUnique({ where: { id }, select: { id: true } });
    if (!row) throw new StoreError("not_found", `no webhook endpoint with the id ${JSON.stringify(id)}`);
    const deliveries = await tx.webhookDelivery.findMany({ where: { endpointId: id }, select: { id: true } });
    for (let i = 0; i < deliveries.length; i += 500) {
      await tx.webhookAttempt.deleteMany({ where: { deliveryId: { in: deliveries.slice(i, i + 500).map((d) => d.id) } } });
    }
    await tx.webhookDelivery.deleteMany({ where: { endpointId: id } });
    await tx.webhookEndpoint.delete({ where: { id } });
  });
}

/** A new delivery of a message to an endpoint: its job (the log's row comes with its first attempt). */
async function addDelivery(tx: Tx, messageId: string, endpointId: string): Promise<string> {
  const job = deliveryJob(messageId, endpointId);
  await enqueueJobs(tx, [job]);
  return job.payload.delivery_id;
}

/** "Send a test event": one message to this endpoint only, whatever its filters (even when disabled: it is a check). */
export async function sendTestEvent(endpointId: string, event: WebhookEvent): Promise<{ message_id: string; delivery_id: string }> {
  return writeTransaction(async (tx) => {
    const row = await tx.webhookEndpoint.findUnique({ where: { id: endpointId }, select: { id: true } });
    if (!row) throw new StoreError("not_found", `no webhook endpoint with the id ${JSON.stringify(endpointId)}`);
    const id = `msg_${randomUUID()}`;
    await tx.webhookMessage.create({ data: { id, type: event.type, body: eventBody(event), link: event.link, operationId: null, createdAt: new Date().toISOString() } });
    return { message_id: id, delivery_id: await addDelivery(tx, id, endpointId) };
  });
}

/** Redeliver: the same message (the same webhook-id) to the same endpoint, as a new delivery from the first attempt. */
export async function redeliver(endpointId: string, deliveryId: string): Promise<{ delivery_id: string }> {
  return writeTransaction(async (tx) => {
    const d = await tx.webhookDelivery.findUnique({ where: { id: deliveryId } });
    if (!d || d.endpointId !== endpointId) throw new StoreError("not_found", `no delivery ${JSON.stringify(deliveryId)} for this endpoint`);
    return { delivery_id: await addDelivery(tx, d.messageId, endpointId) };
  });
}

/** The endpoint's deliveries, newest first, each with every attempt. `before`: a created_at to page from. */
export async function listDeliveries(endpointId: string, opts: { limit?: number; before?: string } = {}): Promise<Delivery[]> {
  const db = await reader();
  const limit = Math.min(Math.max(opts.limit ?? 50, 1), 200);
  const rows = await db.webhookDelivery.findMany({
    where: { endpointId, ...(opts.before ? { createdAt: { lt: opts.before } } : {}) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit,
  });
  if (!rows.length) return [];
  const [messages, attempts] = await Promise.all([
    db.webhookMessage.findMany({ where: { id: { in: [...new Set(rows.map((r) => r.messageId))] } }, select: { id: true, type: true } }),
    db.webhookAttempt.findMany({ where: { deliveryId: { in: rows.map((r) => r.id) } }, orderBy: { n: "asc" } }),
  ]);
  const typeOf = new Map(messages.map((m) => [m.id, m.type]));
  const byDelivery = new Map<string, Attempt[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.deliveryId) ?? [];
    list.push({ n: a.n, at: a.at, status_code: a.statusCode, ms: a.ms, excerpt: a.excerpt, error: a.error });
    byDelivery.set(a.deliveryId, list);
  }
  return rows.map((r) => ({
    id: r.id,
    webhook_id: r.messageId,
    type: typeOf.get(r.messageId) ?? "",
    status: r.status as Delivery["status"],
    attempts: r.attempts,
    next_at: r.status === "pending" ? r.nextAt : null,
    last_status: r.lastStatus,
    last_error: r.lastError,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    attempt_log: byDelivery.get(r.id) ?? [],
  }));
}

/** What the sender needs of one delivery, in one query: the message, its endpoint, and the log's row when an attempt was made before. */
export async function deliveryForSending(job: DeliveryJob) {
  const p = placeholder;
  const [row] = await asSql(await reader()).all<{
    id: string;
    type: string;
    body: string;
    link: string;
    url: string | null;
    format: string | null;
    enabled: boolean | number | null;
    secret_sealed: string | null;
    previous_secret_sealed: string | null;
    previous_secret_expires_at: string | null;
    status: string | null;
    attempts: number | bigint | null;
  }>(
    `SELECT m.id, m.type, m.body, m.link, e.url, e.format, e.enabled, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at, d.status, d.attempts
     FROM webhook_messages m LEFT JOIN webhook_endpoints e ON e.id = ${p(1)} LEFT JOIN webhook_deliveries d ON d.id = ${p(2)}
     WHERE m.id = ${p(3)}`,
    [job.endpoint_id, job.delivery_id, job.message_id],
  );
  if (!row) return null;
  const previous = row.previous_secret_sealed && row.previous_secret_expires_at ? { sealed: row.previous_secret_sealed, until: row.previous_secret_expires_at } : null;
  return {
    message: { id: row.id, type: row.type, body: row.body, link: row.link },
    endpoint: row.url === null ? null : { id: job.endpoint_id, url: row.url, format: row.format!, enabled: Boolean(row.enabled), secretSealed: row.secret_sealed!, previous },
    delivery: row.status === null ? null : { status: row.status, attempts: Number(row.attempts) },
  };
}

export type AttemptRecord = { n: number; at: string; statusCode: number | null; ms: number; excerpt: string; error: string | null };

/** The log's row of a delivery, written at its first attempt and updated after each (raw SQL: the sender's hot path). */
async function upsertDelivery(db: SqlLike, job: DeliveryJob, d: { status: string; attempts: number | null; nextAt: string | null; lastStatus: number | null; lastError: string | null }) {
  const now = new Date().toISOString();
  const p = placeholder;
  await asSql(db).run(
    `INSERT INTO webhook_deliveries (id, message_id, endpoint_id, status, attempts, next_at, last_status, last_error, created_at, updated_at)
     VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}, ${p(9)}, ${p(10)})
     ON CONFLICT (id) DO UPDATE SET status = excluded.status, attempts = excluded.attempts, next_at = excluded.next_at,
       last_status = excluded.last_status, last_error = excluded.last_error, updated_at = excluded.updated_at`,
    [job.delivery_id, job.message_id, job.endpoint_id, d.status, d.attempts ?? 0, d.nextAt, d.lastStatus, d.lastError, now, now],
  );
}

/**
 * Records one attempt and what follows from it, inside the caller's transaction (the sender
 * ends the job in the same one): delivered, failed, pending again, or gone (410: the endpoint is
 * disabled too).
 */
export async function recordAttempt(
  db: SqlLike,
  job: DeliveryJob,
  attempt: AttemptRecord,
  next: { status: "delivered" | "failed" | "pending"; nextAt?: string | null; disableEndpoint?: { id: string; reason: string } },
): Promise<void> {
  const p = placeholder;
  await insertMany(db, "webhook_attempts", ["id", "delivery_id", "n", "at", "status_code", "ms", "excerpt", "error"], [
    [randomUUID(), job.delivery_id, attempt.n, attempt.at, attempt.statusCode, attempt.ms, attempt.excerpt, attempt.error],
  ]);
  await upsertDelivery(db, job, { status: next.status, attempts: attempt.n, nextAt: next.nextAt ?? null, lastStatus: attempt.statusCode, lastError: attempt.error });
  if (next.disableEndpoint) {
    await asSql(db).run(`UPDATE webhook_endpoints SET enabled = FALSE, disabled_reason = ${p(1)}, updated_at = ${p(2)} WHERE id = ${p(3)}`, [
      next.disableEndpoint.reason,
      new Date().toISOString(),
      next.disableEndpoint.id,
    ]);
  }
}

/** A delivery that will not be attempted (its endpoint was disabled), in the caller's transaction. */
export async function cancelDelivery(db: SqlLike, job: DeliveryJob, reason: string): Promise<void> {
  await upsertDelivery(db, job, { status: "cancelled", attempts: null, nextAt: null, lastStatus: null, lastError: reason });
}
