import "server-only";
import { isPossibleOperationId } from "@/lib/domain/wire";
import { isPastExpiry, mayDecide, mayUse, type ApprovalDecisionRequest, type ApprovalPayload, type ApprovalState } from "@/lib/domain/approval";
import type { ChainRecord } from "@/lib/domain/hash";
import type { OperationState } from "@/lib/domain/operation";
import { approvalDecidedEvent, approvalRequestedEvent } from "@/lib/domain/webhooks/approval-events";
import { operationEvents } from "@/lib/domain/webhooks/events";
import { requireNotClaimedByOther } from "./assignments";
import { appendToChain, lockChain } from "../chain/chain";
import { maybeCheckpoint } from "../chain/checkpoints";
import type { Db, Tx } from "../db/database";
import { instanceReader, reader, writeTransaction } from "../db/db";
import { StoreError } from "../errors";
import { enqueueJobs, finishJob, type Job } from "../work/jobs";
import { writeProjection } from "../projection/projection";
import type { SqlLike } from "../db/sql";
import { correctionFacts, loadOperationRecords, stateOf, type OperationRecords } from "../chain/stage-records";
import { announce, publicLinks } from "../work/webhook-outbox";

/**
 * Approvals in the store (docs/GATEWAY.md): a decision, an expiry and the single use of an
 * approved call are chained records of kind "approval", each appended under the operation's chain
 * lock after the state it is decided against was read there, so of two reviewers (or two gateway
 * instances) exactly one wins. The projection (operation_approvals) is rewritten in the same
 * transaction, and so are the webhook outbox rows.
 */

export const APPROVAL_EXPIRY_JOB = "approval.expire";

export type ApprovalView = ApprovalState & { operation_id: string; effective_outcome: string; reason_text: string };

type Loaded = { identity: { operationId: string; createdSeq: number; createdAt: string; ownerId: string | null }; state: OperationState; records: OperationRecords };

async function loadHeld(tx: Tx | Db, operationId: string): Promise<Loaded> {
  if (!isPossibleOperationId(operationId)) throw new StoreError("not_found", `no operation with the id ${JSON.stringify(operationId)}`);
  const identity = await tx.operation.findUnique({ where: { operationId } });
  if (!identity) throw new StoreError("not_found", `no operation with the id ${operationId}`);
  const records = (await loadOperationRecords(tx, [operationId])).get(operationId) ?? { stages: [], corrections: [] };
  const state = stateOf(operationId, records);
  if (!state.approval) throw new StoreError("not_found", `operation ${operationId} was not held for approval`);
  return { identity, state, records };
}

/** Appends one approval record and rewrites the projection; the state after it. */
async function appendApproval(tx: Tx, loaded: Loaded, actor: string | null, payload: ApprovalPayload): Promise<{ after: OperationState; record: ChainRecord }> {
  const { identity, records } = loaded;
  const [record] = await appendToChain(tx, [{ kind: "approval", operation_id: identity.operationId, actor, payload, op_seq: identity.createdSeq }], undefined, { locked: true });
  const approvals = [...(records.approvals ?? []), { ...payload, seq: record.seq, recorded_at: record.recorded_at, actor }];
  const states = await writeProjection(tx, [{ identity, stages: records.stages, corrections: correctionFacts(records.corrections), approvals }]);
  return { after: states.get(identity.operationId)!, record };
}

/** The announcements of a decision or an expiry: approval.decided and the verdict events it causes. */
async function announceDecision(tx: Tx, loaded: Loaded, after: OperationState, record: ChainRecord, action: "decided" | "expired") {
  const links = publicLinks();
  const id = loaded.identity.operationId;
  const change = { operationId: id, before: loaded.state.effective_outcome, after, cause: { kind: "approval" as const, action, seq: record.seq, by: record.actor }, at: record.recorded_at };
  await announce(tx, [approvalDecidedEvent(id, after, links), ...operationEvents(change, links)]);
}

function view(operationId: string, state: OperationState): ApprovalView {
  return { ...state.approval!, operation_id: operationId, effective_outcome: state.effective_outcome, reason_text: state.classification.reason };
}

/** Writes the expiry of a pending approval whose time is up (under the lock the caller holds). Null when it is not due. */
async function expireIn(tx: Tx, loaded: Loaded, now: number): Promise<OperationState | null> {
  const a = loaded.state.approval!;
  if (!isPastExpiry(a, now)) return null;
  const { after, record } = await appendApproval(tx, loaded, null, { action: "expired", expires_at: a.expires_at });
  await announceDecision(tx, loaded, after, record, "expired");
  return after;
}

/**
 * A reviewer approves or denies a held call. Refused (409) once decided or expired (an expiry
 * found here is recorded first), 403 for the account that made the call, `claimed_by_other`
 * while another reviewer holds the operation.
 */
export async function decideApproval(input: { operationId: string; request: ApprovalDecisionRequest; reviewer: string; reviewerId: string }): Promise<ApprovalView> {
  const result = await writeTransaction(async (tx) => {
    await lockChain(tx, [input.operationId]);
    // The time under the lock: a decision that waited for it must not land after the expiry.
    const now = Date.now();
    const loaded = await loadHeld(tx, input.operationId);
    await requireNotClaimedByOther(tx, input.operationId, input.reviewer);
    const expired = await expireIn(tx, loaded, now);
    if (expired) return { refused: { code: "conflict" as const, message: `the approval expired at ${expired.approval!.expires_at}; the call was not sent` }, view: view(input.operationId, expired) };
    const verdict = mayDecide(loaded.state.approval!, { reviewer: input.reviewerId, owner: loaded.identity.ownerId, now });
    if (!verdict.ok) return { refused: verdict, view: view(input.operationId, loaded.state) };
    const intentSeq = loaded.records.stages.find((s) => s.stage === "intent")!.seq;
    const a = loaded.state.approval!;
    const { after, record } = await appendApproval(tx, loaded, input.reviewer, {
      action: "decided",
      decision: input.request.decision,
      reason: input.request.reason,
      params_digest: a.params_digest,
      rule_version: a.rule_version,
      intent_seq: intentSeq,
    });
    await announceDecision(tx, loaded, after, record, "decided");
    return { refused: null, view: view(input.operationId, after) };
  });
  void maybeCheckpoint();
  if (result.refused) throw new StoreError(result.refused.code, result.refused.message, { approval: result.view });
  return result.view;
}

/**
 * An approved call is taken for forwarding: once, by the account that asked for it (or an admin),
 * with the approved arguments' digest. The second taker gets a conflict.
 */
export async function useApproval(input: { operationId: string; paramsDigest: string; ruleVersion?: string; user: string; userId: string; admin: boolean }): Promise<ApprovalView> {
  const result = await writeTransaction(async (tx) => {
    await lockChain(tx, [input.operationId]);
    const loaded = await loadHeld(tx, input.operationId);
    if (!input.admin && loaded.identity.ownerId !== null && loaded.identity.ownerId !== input.userId) {
      return { refused: { code: "not_operation_owner" as const, message: "only the account that asked for the approval forwards the call" }, view: view(input.operationId, loaded.state) };
    }
    const verdict = mayUse(loaded.state.approval!, { digest: input.paramsDigest, ruleVersion: input.ruleVersion, now: Date.now() });
    if (!verdict.ok) return { refused: verdict, view: view(input.operationId, loaded.state) };
    const { after } = await appendApproval(tx, loaded, input.user, { action: "used", params_digest: input.paramsDigest });
    return { refused: null, view: view(input.operationId, after) };
  });
  if (result.refused) throw new StoreError(result.refused.code, result.refused.message, { approval: result.view });
  return result.view;
}

/** Where an approval stands; a pending one whose time is up is expired (and recorded) first. */
export async function getApproval(operationId: string, now = Date.now()): Promise<ApprovalView> {
  const db = await reader();
  const loaded = await loadHeld(db, operationId);
  if (!isPastExpiry(loaded.state.approval!, now)) return view(operationId, loaded.state);
  return expireApproval(operationId, now).then((v) => v ?? getApproval(operationId, now));
}

/** Records the expiry of a pending approval whose time is up; null when there is nothing to expire. */
export async function expireApproval(operationId: string, now = Date.now()): Promise<ApprovalView | null> {
  const after = await writeTransaction(async (tx) => {
    await lockChain(tx, [operationId]);
    return expireIn(tx, await loadHeld(tx, operationId), now);
  });
  if (after) void maybeCheckpoint();
  return after ? view(operationId, after) : null;
}

/**
 * Ingest's part, in its transaction: for each operation whose intent this append recorded with
 * a pending approval, the expiry job (due at its expiry) and `approval.requested`.
 */
export async function holdForApproval(tx: SqlLike, appended: Pick<ChainRecord, "operation_id" | "payload">[], states: Map<string, OperationState>): Promise<void> {
  const held = new Set<string>();
  for (const r of appended) {
    if (!r.operation_id || (r.payload as { stage?: unknown }).stage !== "intent") continue;
    if (states.get(r.operation_id)?.approval?.status === "pending") held.add(r.operation_id);
  }
  if (!held.size) return;
  const links = publicLinks();
  const ids = [...held];
  await enqueueJobs(
    tx,
    ids.map((id) => ({ kind: APPROVAL_EXPIRY_JOB, key: `approval-expiry:${id}`, payload: { operation_id: id }, dueAt: Date.parse(states.get(id)!.approval!.expires_at) })),
  );
  await announce(tx, ids.map((id) => approvalRequestedEvent(id, states.get(id)!, links)));
}

export type ApprovalRow = {
  operation_id: string;
  status: string;
  tool: string | null;
  rule: string;
  requested_at: string;
  expires_at: string;
  decided_by: string | null;
  decided_at: string | null;
};

/** Held calls by status, oldest request first (the Approvals tab), with how many there are. */
export async function listApprovals(opts: { status?: string; limit?: number } = {}): Promise<{ rows: ApprovalRow[]; total: number }> {
  const db = await reader();
  const status = opts.status ?? "pending";
  const [rows, total] = await Promise.all([
    db.operationApproval.findMany({ where: { status }, orderBy: [{ requestedAt: "asc" }, { createdSeq: "asc" }], take: Math.min(opts.limit ?? 50, 200) }),
    db.operationApproval.count({ where: { status } }),
  ]);
  return {
    rows: rows.map((r) => ({ operation_id: r.operationId, status: r.status, tool: r.tool, rule: r.rule, requested_at: r.requestedAt, expires_at: r.expiresAt, decided_by: r.decidedBy, decided_at: r.decidedAt })),
    total,
  };
}

/** The expiry job (due at the approval's expiry): the expiry and the job's end commit together, so it is recorded once. */
export async function runApprovalExpiryJob(job: Job): Promise<void> {
  const operationId = (job.payload as { operation_id?: unknown })?.operation_id;
  const expired = await writeTransaction(async (tx) => {
    if (typeof operationId !== "string") {
      await finishJob(tx, job, { status: "failed", error: "the job names no operation" });
      return false;
    }
    await lockChain(tx, [operationId]);
    const after = await expireIn(tx, await loadHeld(tx, operationId), Date.now());
    await finishJob(tx, job, { status: "done" });
    return after !== null;
  });
  if (expired) void maybeCheckpoint();
}

export type HeldCall = ApprovalRow & { agent: string | null; params: Record<string, unknown>; effect: string | null; owner: string | null };

/** The Approvals tab: pending held calls, oldest request first, with the arguments a reviewer decides on. */
export async function approvalQueue(limit = 50): Promise<{ calls: HeldCall[]; total: number }> {
  const { rows, total } = await listApprovals({ status: "pending", limit });
  if (!rows.length) return { calls: [], total };
  const db = await reader();
  const ids = rows.map((r) => r.operation_id);
  const [records, views, owners] = await Promise.all([
    loadOperationRecords(db, ids),
    db.operationView.findMany({ where: { operationId: { in: ids } }, select: { operationId: true, agent: true } }),
    db.operation.findMany({ where: { operationId: { in: ids } }, select: { operationId: true, ownerId: true } }),
  ]);
  const agents = new Map(views.map((v) => [v.operationId, v.agent]));
  const ownerIds = new Map(owners.map((o) => [o.operationId, o.ownerId]));
  // Users are the instance's (its database), not the project's: read there, whatever project this is.
  const emails = new Map(
    (await (await instanceReader()).user.findMany({ where: { id: { in: [...new Set(owners.flatMap((o) => (o.ownerId ? [o.ownerId] : [])))] } }, select: { id: true, email: true } })).map((u) => [u.id, u.email]),
  );
  const calls = rows.map((r) => {
    const intent = records.get(r.operation_id)?.stages.find((s) => s.stage === "intent")?.data as { params?: unknown; effect?: unknown } | undefined;
    const params = intent?.params && typeof intent.params === "object" && !Array.isArray(intent.params) ? (intent.params as Record<string, unknown>) : {};
    const owner = ownerIds.get(r.operation_id);
    return { ...r, agent: agents.get(r.operation_id) ?? null, params, effect: typeof intent?.effect === "string" ? intent.effect : null, owner: owner ? (emails.get(owner) ?? null) : null };
  });
  return { calls, total };
}

/** How many held calls wait for a reviewer (the Approvals tab's count). */
export async function pendingApprovalCount(): Promise<number> {
  return (await reader()).operationApproval.count({ where: { status: "pending" } });
}
