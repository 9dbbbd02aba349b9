import "server-only";
import { deriveOperation, type OperationState, type StoredStage } from "@/lib/domain/operation";
import { HeldStages, reconcileRecord, stageChainPayloadCanonical, type PreparedRecord, type StageRecordDraft } from "@/lib/domain/stages";
import { canonicalJson, type ChainRecord } from "@/lib/domain/hash";
import { ownershipRefusal, readCapRefusal, type Sender } from "@/lib/domain/trust";
import type { EffectiveOutcome } from "@/lib/domain/outcomes";
import { ingestPacer } from "../db/pace";
import { appendToChain, lockChain, type ChainEntry } from "../chain/chain";
import { sqlWriteTransaction } from "../db/db";
import { refused, StoreError } from "../errors";
import { planProjection, writeProjection, type Identity, type ProjectionOp, type ProjectionPlan } from "../projection/projection";
import { insertMany, selectIn, type Sql } from "../db/sql";
import { holdForApproval } from "../review/approvals";
import { scheduleVerifierChecks } from "./verifier-schedule";
import type { VerifierVersion } from "@/lib/domain/verifier";
import { announceStages } from "../work/webhook-outbox";
import { exportStageVerdicts } from "../work/verdict-outbox";
import { correctionFacts, loadOperationRecords, type OperationRecords, type StagePayload } from "../chain/stage-records";

/**
 * An ingest answer names at most this many observed side effects per item (and then says how
 * many there are): otherwise a 4 MiB batch of 500 records, each repeating an operation with
 * 100,000 side effects, would be answered with gigabytes. The operation read has them all.
 */
export const ANSWER_SIDE_EFFECTS = 100;

/** canonicalJson of a sender's sent_by, once per sender object (a request's records share one). */
const sentByKeys = new WeakMap<Sender, string>();
function sentByKey(sender: Sender): string {
  let key = sentByKeys.get(sender);
  if (key === undefined) sentByKeys.set(sender, (key = canonicalJson(sender.sent_by)));
  return key;
}

/** The derived state the API answers with for each operation (docs/API.md "Ingest"). */
export function derivedState(operationId: string, state: OperationState, opts: { maxSideEffects?: number } = {}) {
  const c = state.classification;
  const max = opts.maxSideEffects ?? Infinity;
  const effects = c.observed_side_effects;
  return {
    operation_id: operationId,
    outcome: c.outcome,
    reason: c.reason,
    failure_category: c.failure_category,
    observed_side_effects: effects.length > max ? effects.slice(0, max) : effects,
    ...(effects.length > max ? { observed_side_effects_total: effects.length } : {}),
    retry: c.retry,
  };
}

/** A record that passed validation and the checks that need no database, with who sent it. */
export type ValidRecord = {
  index: number;
  operationId: string;
  raw: Record<string, unknown>;
  sender: Sender;
  /** Split and canonicalised before the chain lock (ingest.ts); computed here when absent. */
  prepared?: PreparedRecord;
};

/** Each record's outcome: stored (`created`: its first stage records made the operation), or refused. */
export type IngestResult =
  | { index: number; created: boolean; body: ReturnType<typeof derivedState> & { duplicate: boolean } }
  | { index: number; error: StoreError };

/**
 * Ingests validated records in one transaction: every accepted record's new stage records are
 * appended to the chain and the projection updated together; a record in conflict stores
 * nothing and gets its own error. The chain lock is taken first, so two requests carrying the
 * same stage cannot both store it.
 */
export async function ingestRecords(records: ValidRecord[], opts: { tx?: Sql } = {}): Promise<IngestResult[]> {
  if (!records.length) return [];
  // In the caller's transaction when given one (a verifier's read is recorded with its job's end).
  const transaction = opts.tx ? <T>(fn: (tx: Sql) => Promise<T>) => fn(opts.tx!) : sqlWriteTransaction;
  return transaction(async (tx) => {
    const ids = operationIdsOf(records);
    await lockChain(tx, ids);
    const pace = ingestPacer({ holdsLock: true });
    const decided = await decideBatch(records, await readBasis(tx, ids), pace);
    const appended = await appendToChain(tx, decided.entries, undefined, { locked: true, pace });
    return writeDecided(tx, decided, appended);
  });
}

export const operationIdsOf = (records: ValidRecord[]): string[] => [...new Set(records.map((r) => r.operationId))];

type Known = { operation_id: string; created_seq: number | bigint; created_at: string; owner_id: string | null };

/**
 * What deciding a batch reads: which of its operations exist (and who owns them), and their
 * stage records and corrections. Every change to either is an append to the operation's chain,
 * so it is current while the chain's head is the one read with it (ingest-speculation.ts).
 */
export type Basis = { ids: string[]; known: Known[]; records: Map<string, OperationRecords> };

export async function readBasis(db: Sql, ids: string[]): Promise<Basis> {
  const known = await selectIn<Known>(db, "SELECT operation_id, created_seq, created_at, owner_id FROM operations WHERE operation_id IN %IN%", ids);
  const records = await loadOperationRecords(
    db,
    known.map((o) => o.operation_id),
  );
  return { ids, known, records };
}

/** A batch decided against its basis: what each record gets, and the chain entries to append. */
export type Decided = {
  ids: string[];
  owners: Map<string, string | null>;
  identities: Map<string, Identity>;
  existing: Map<string, StoredStage[]>;
  records: Map<string, OperationRecords>;
  isNew: Set<string>;
  accepted: { record: ValidRecord; fresh: StageRecordDraft[]; keys: string[]; duplicate: boolean }[];
  results: IngestResult[];
  entries: (ChainEntry & { stage: StageRecordDraft["stage"] })[];
};

/**
 * Decides each record against what is stored (the basis) plus what earlier records of this
 * batch add, in order. Reads nothing: the same basis gives the same decision, under the lock or
 * before it.
 */
export async function decideBatch(records: ValidRecord[], basis: Basis, pace: () => Promise<void>): Promise<Decided> {
  const { ids, known } = basis;
  // Who created each operation: stored, or the sender of its first accepted record in this batch.
  const owners = new Map<string, string | null>(known.map((o) => [o.operation_id, o.owner_id]));
  const identities = new Map<string, Identity>(
    known.map((o) => [o.operation_id, { operationId: o.operation_id, createdSeq: Number(o.created_seq), createdAt: o.created_at }]),
  );
  const existing = new Map([...basis.records].map(([id, r]) => [id, r.stages as StoredStage[]]));
  const isNew = new Set(ids.filter((id) => !identities.has(id)));

  // One index per operation, grown record by record (never rescanned: linear in the batch).
  // A maximum-size batch is seconds of work on a slow core: `pace` lets other requests in between.
  const working = new Map<string, HeldStages>();
  for (const id of ids) {
    const held = new HeldStages();
    for (const s of existing.get(id) ?? []) {
      await pace();
      held.hold({ stage: s.stage, payload: s.data, envelope: s.envelope });
    }
    working.set(id, held);
  }
  const accepted: Decided["accepted"] = [];
  const results: IngestResult[] = [];
  for (const record of records) {
    await pace();
    const held = working.get(record.operationId)!;
    const owned = owners.has(record.operationId) ? ownershipRefusal(record.raw, owners.get(record.operationId)!, record.sender.rights) : null;
    if (owned) {
      results.push({ index: record.index, error: refused(owned) });
      continue;
    }
    const decision = reconcileRecord(record.raw, held, record.prepared);
    if (decision.kind === "conflict") {
      results.push({ index: record.index, error: new StoreError("conflict", decision.message, decision.details) });
      continue;
    }
    let freshReads = 0;
    for (const d of decision.fresh) if (d.stage === "canonical_read") freshReads++;
    const capped = readCapRefusal(held.readCount, freshReads);
    if (capped) {
      results.push({ index: record.index, error: refused(capped) });
      continue;
    }
    if (!owners.has(record.operationId) && decision.fresh.length) owners.set(record.operationId, record.sender.rights.userId);
    held.accept(decision);
    accepted.push({ record, fresh: decision.fresh, keys: decision.keys, duplicate: decision.duplicate });
  }

  const entries = accepted.flatMap(({ record, fresh, keys }) =>
    fresh.map((d, i) => ({
      kind: "stage" as const,
      operation_id: record.operationId,
      actor: record.sender.actor,
      stage: d.stage,
      observed_at: d.observed_at,
      payload: {
        stage: d.stage,
        observed_at: d.observed_at,
        data: d.payload,
        ...(d.envelope ? { envelope: d.envelope } : {}),
        sent_by: record.sender.sent_by,
      },
      payloadCanonical: stageChainPayloadCanonical(d, keys[i], sentByKey(record.sender)),
      op_seq: identities.get(record.operationId)?.createdSeq ?? ("new" as const),
    })),
  );
  return { ids, owners, identities, existing, records: basis.records, isNew, accepted, results, entries };
}

/**
 * What storing a decided group writes once its records are appended, computed without the
 * database: the new operations' identity rows, the projection (planProjection) and each record's
 * answer. Pure given the appended records, so a group decided ahead of the chain lock has it
 * computed there too (ingest-speculation.ts), not while the lock is held.
 */
export type WritePlan = {
  created: (Identity & { ownerId: string | null })[];
  ops: ProjectionOp[];
  existing: string[];
  projection: ProjectionPlan;
  results: IngestResult[];
  /**
   * The settings the writes read (audit sampling rates, the active verifiers of the group's
   * tools), when read ahead in the guess's snapshot. Every change to them is an append to the
   * chain, so they are current exactly when the guess holds.
   */
  settings?: { rates: Map<string, number>; verifiers: VerifierVersion[] };
};

export function planWrite(decided: Decided, appended: ChainRecord[]): WritePlan {
  const { ids, owners, existing, isNew, accepted, entries } = decided;
  // Copies of what this adds to: a decided group stays as it was decided.
  const identities = new Map(decided.identities);
  const results = [...decided.results];
  const correctionsOf = (id: string) => correctionFacts(decided.records.get(id)?.corrections ?? []);
  // New operations get their immutable identity row; touched ones a fresh projection.
  const stagesById = new Map<string, StoredStage[]>();
  for (const id of ids) stagesById.set(id, [...(existing.get(id) ?? [])]);
  appended.forEach((rec, i) => {
    const p = rec.payload as StagePayload;
    stagesById.get(rec.operation_id!)!.push({
      seq: rec.seq,
      stage: entries[i].stage,
      observed_at: p.observed_at,
      recorded_at: rec.recorded_at,
      data: p.data,
      envelope: p.envelope ?? null,
      sent_by: p.sent_by ?? null,
    });
  });
  const touched = [...new Set(appended.map((r) => r.operation_id!))];
  const created = touched
    .filter((id) => isNew.has(id))
    .map((id) => {
      const first = stagesById.get(id)![0];
      return { operationId: id, createdSeq: first.seq, createdAt: first.recorded_at, ownerId: owners.get(id) ?? null };
    });
  for (const r of created) identities.set(r.operationId, r);
  const approvalsOf = (id: string) => decided.records.get(id)?.approvals;
  const ops = touched.map((id) => ({ identity: identities.get(id)!, stages: stagesById.get(id)!, corrections: correctionsOf(id), approvals: approvalsOf(id) }));
  const projection = planProjection(ops);
  const states = new Map(projection.states);

  // Duplicates of known operations still answer with the current derived state.
  const untouched = ids.filter((id) => !states.has(id) && identities.has(id));
  for (const id of untouched) states.set(id, deriveOperation(id, stagesById.get(id)!, correctionsOf(id), approvalsOf(id)));
  const firstAcceptedIndex = new Map<string, number>();
  for (const a of accepted) {
    if (!firstAcceptedIndex.has(a.record.operationId) && a.fresh.length) firstAcceptedIndex.set(a.record.operationId, a.record.index);
  }
  for (const { record, duplicate } of accepted) {
    const state = states.get(record.operationId);
    if (!state) continue; // unreachable: an accepted record either added stages or its operation exists
    const createdHere = isNew.has(record.operationId) && firstAcceptedIndex.get(record.operationId) === record.index;
    results.push({
      index: record.index,
      created: createdHere,
      body: { ...derivedState(record.operationId, state, { maxSideEffects: ANSWER_SIDE_EFFECTS }), duplicate },
    });
  }
  return { created, ops, existing: touched.filter((id) => !isNew.has(id)), projection, results: results.sort((a, b) => a.index - b.index) };
}

/**
 * After its records are appended: the new operations' identity rows, the projection, verifier
 * checks and webhook outbox rows, all in the same transaction, and each record's answer.
 * `plan`: planWrite(decided, appended), when it was computed ahead.
 */
export async function writeDecided(tx: Sql, decided: Decided, appended: ChainRecord[], plan: WritePlan = planWrite(decided, appended)): Promise<IngestResult[]> {
  if (plan.created.length) {
    await insertMany(
      tx,
      "operations",
      ["operation_id", "created_seq", "created_at", "owner_id"],
      plan.created.map((r) => [r.operationId, r.createdSeq, r.createdAt, r.ownerId]),
    );
  }
  const before = new Map<string, EffectiveOutcome>();
  const states = await writeProjection(tx, plan.ops, { existing: plan.existing, drawAudits: true, before, rates: plan.settings?.rates }, plan.projection);
  // Receipts of tools with a verifier: their checks, in this transaction (VERIFIERS.md).
  await scheduleVerifierChecks(tx, appended, states, undefined, plan.settings?.verifiers);
  // Webhooks: the outbox rows commit with these records or not at all.
  await announceStages(tx, appended, states, before);
  // Verdicts out (RECONCILE_VERDICT_OTLP_ENDPOINT): the same, as OpenTelemetry events.
  await exportStageVerdicts(tx, appended, states, before);
  // Calls held for approval: their expiry job and approval.requested, in this transaction too.
  await holdForApproval(tx, appended, states);
  return plan.results;
}
