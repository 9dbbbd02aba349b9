import { canonicalJson } from "./hash";
import { isPlainObject } from "./json";
import { normalizeInstant } from "./time";
import { STAGE_KEYS, type Stage } from "./wire";

/**
 * One stage observation split out of an ingest record (DOMAIN.md "Stage records"). `payload`
 * is the stage exactly as received; `envelope` (the record's non-stage keys) rides on the
 * first stage record of the record that carried it, so it is hashed too.
 */
export type StageRecordDraft = {
  stage: Stage;
  /** The stage's own time, normalised to UTC milliseconds, or null (intent, side effects). */
  observed_at: string | null;
  payload: unknown;
  envelope: Record<string, unknown> | null;
};

export const ENVELOPE_EXCLUDED = new Set<string>(["operation_id", ...STAGE_KEYS]);

/** The record's envelope: every top-level key that is neither the id nor a stage. */
export function envelopeOf(raw: Record<string, unknown>): Record<string, unknown> {
  const env: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) if (!ENVELOPE_EXCLUDED.has(k)) env[k] = v;
  return env;
}

/** Splits a validated raw record into stage drafts, in the canonical stage order. */
export function splitRecord(raw: Record<string, unknown>): StageRecordDraft[] {
  const drafts: StageRecordDraft[] = [];
  const timeOf = (v: unknown) =>
    isPlainObject(v) && typeof v.observed_at === "string" ? normalizeInstant(v.observed_at) : null;
  if (raw.intent !== undefined) drafts.push({ stage: "intent", observed_at: null, payload: raw.intent, envelope: null });
  if (raw.receipt !== undefined) drafts.push({ stage: "receipt", observed_at: timeOf(raw.receipt), payload: raw.receipt, envelope: null });
  if (raw.canonical_read !== undefined) {
    const reads = Array.isArray(raw.canonical_read) ? raw.canonical_read : [raw.canonical_read];
    for (const r of reads) drafts.push({ stage: "canonical_read", observed_at: timeOf(r), payload: r, envelope: null });
  }
  if (raw.side_effects !== undefined) drafts.push({ stage: "side_effects", observed_at: null, payload: raw.side_effects, envelope: null });
  const env = envelopeOf(raw);
  if (drafts.length && Object.keys(env).length) drafts[0].envelope = env;
  return drafts;
}

/** The operation's view of its envelope: the first value received for each key. */
export function mergeEnvelopes(envelopes: (Record<string, unknown> | null)[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const env of envelopes) {
    if (!env) continue;
    for (const [k, v] of Object.entries(env)) if (!Object.hasOwn(merged, k)) merged[k] = v;
  }
  return merged;
}

/** The identity of a stage payload for de-duplication: its canonical JSON (RFC 8785). */
export const payloadKey = (payload: unknown): string => canonicalJson(payload ?? null);

/** A record split into stage drafts, each with its payload's canonical JSON. */
export type PreparedRecord = { drafts: StageRecordDraft[]; keys: string[] };

/**
 * The expensive, lock-free part of deciding a record: split it and canonicalise each payload
 * once. Ingest does this before taking the chain lock; the keys then serve de-duplication
 * (`reconcileRecord`) and the chain hash (`stageChainPayloadCanonical`).
 */
export function prepareRecord(raw: Record<string, unknown>): PreparedRecord {
  const drafts = splitRecord(raw);
  return { drafts, keys: drafts.map((d) => payloadKey(d.payload)) };
}

/**
 * canonicalJson of a stage record's chain payload `{stage, observed_at, data, envelope?}`,
 * composed around the data's canonical JSON (`dataKey`) instead of canonicalising it again.
 */
export function stageChainPayloadCanonical(d: StageRecordDraft, dataKey: string, sentByKey?: string): string {
  const envelope = d.envelope ? `"envelope":${canonicalJson(d.envelope)},` : "";
  const sentBy = sentByKey === undefined ? "" : `"sent_by":${sentByKey},`;
  return `{"data":${dataKey},${envelope}"observed_at":${canonicalJson(d.observed_at)},${sentBy}"stage":${canonicalJson(d.stage)}}`;
}

export type ExistingStage = { stage: Stage; payload: unknown; envelope?: Record<string, unknown> | null };

/**
 * What an operation holds, indexed so that deciding a record costs the record's own size, not
 * the operation's: each stage payload by its canonical JSON (intent and receipt: the one key;
 * reads and side effects: a set), and the merged envelope with each value's canonical JSON
 * computed once. A batch of many records for one operation is decided against one of these,
 * grown with each accepted record (`accept`), never rescanned (TRUST.md "Cost is linear").
 */
export class HeldStages {
  private readonly single = new Map<"intent" | "receipt", string>();
  private readonly observations = { canonical_read: new Set<string>(), side_effects: new Set<string>() };
  private readonly envelopeKeys = new Map<string, string>();
  readonly envelope: Record<string, unknown> = {};

  constructor(existing: Iterable<ExistingStage> = []) {
    for (const e of existing) this.hold(e);
  }

  /** Adds one stored stage (canonicalising its payload). */
  hold(e: ExistingStage): void {
    this.add(e.stage, payloadKey(e.payload), e.envelope ?? null);
  }

  private add(stage: Stage, key: string, envelope: Record<string, unknown> | null) {
    if (stage === "intent" || stage === "receipt") {
      if (!this.single.has(stage)) this.single.set(stage, key);
    } else this.observations[stage].add(key);
    if (envelope) for (const [k, v] of Object.entries(envelope)) if (!Object.hasOwn(this.envelope, k)) this.envelope[k] = v;
  }

  /** The key of the recorded intent or receipt, if any. */
  keyOf(stage: "intent" | "receipt"): string | undefined {
    return this.single.get(stage);
  }

  /** How many distinct canonical reads it holds (the per-operation cap counts these). */
  get readCount(): number {
    return this.observations.canonical_read.size;
  }

  holds(stage: "canonical_read" | "side_effects", key: string): boolean {
    return this.observations[stage].has(key);
  }

  hasEnvelopeKey(k: string): boolean {
    return Object.hasOwn(this.envelope, k);
  }

  /** Canonical JSON of the merged envelope's value for `k` (computed once, then kept). */
  envelopeValueKey(k: string): string {
    let key = this.envelopeKeys.get(k);
    if (key === undefined) {
      key = payloadKey(this.envelope[k]);
      this.envelopeKeys.set(k, key);
    }
    return key;
  }

  /** Adds what an accepted record brought, so the next record of the batch is decided against it. */
  accept(decision: Extract<Reconciled, { kind: "ok" }>): void {
    decision.fresh.forEach((d, i) => this.add(d.stage, decision.keys[i], d.envelope));
  }
}

/** Keys of `incoming` already set in `held`'s envelope with a different value: a conflict. */
export function envelopeConflicts(held: HeldStages, incoming: Record<string, unknown>): string[] {
  return Object.keys(incoming).filter((k) => held.hasEnvelopeKey(k) && held.envelopeValueKey(k) !== payloadKey(incoming[k]));
}

export type Reconciled =
  | { kind: "conflict"; message: string; details: unknown }
  /** `keys[i]` is the canonical JSON of `fresh[i].payload`. */
  | { kind: "ok"; fresh: StageRecordDraft[]; keys: string[]; duplicate: boolean };

/**
 * Decides what of a record is new against what the operation already holds (API.md "Ingest"):
 * an identical stage changes nothing; a different intent or receipt, or a different value for
 * an envelope key already set, is a conflict that stores nothing; reads and side-effect
 * observations are appended when different. Each payload is canonicalised once and looked up
 * in a set: the cost is linear in the record's size. `held` is not changed (see `accept`).
 */
export function reconcileRecord(raw: Record<string, unknown>, held: HeldStages, prepared: PreparedRecord = prepareRecord(raw)): Reconciled {
  const incomingEnv = envelopeOf(raw);
  const conflicts = envelopeConflicts(held, incomingEnv);
  if (conflicts.length) {
    return {
      kind: "conflict",
      message: `the operation already has a different value for ${conflicts.join(", ")}`,
      details: { fields: conflicts },
    };
  }
  const { drafts, keys: draftKeys } = prepared;
  // What this record itself adds, so a repeat within the record is a duplicate too.
  const added = { intent: undefined as string | undefined, receipt: undefined as string | undefined, canonical_read: new Set<string>(), side_effects: new Set<string>() };
  const fresh: StageRecordDraft[] = [];
  const keys: string[] = [];
  for (const [i, d] of drafts.entries()) {
    const key = draftKeys[i];
    if (d.stage === "intent" || d.stage === "receipt") {
      const recorded = held.keyOf(d.stage) ?? added[d.stage];
      if (recorded !== undefined && recorded !== key) {
        return {
          kind: "conflict",
          message: `the operation already has a different ${d.stage}; an operation's ${d.stage} is recorded once and never replaced`,
          details: { stage: d.stage },
        };
      }
      if (recorded !== undefined) continue;
      added[d.stage] = key;
    } else {
      if (held.holds(d.stage, key) || added[d.stage].has(key)) continue;
      added[d.stage].add(key);
    }
    fresh.push({ ...d, envelope: null });
    keys.push(key);
  }
  const newKeys = Object.keys(incomingEnv).filter((k) => !held.hasEnvelopeKey(k));
  if (fresh.length === 0 && newKeys.length) {
    return {
      kind: "conflict",
      message: `${newKeys.join(", ")} can only be recorded together with a new stage: every stage in this record is already recorded`,
      details: { fields: newKeys },
    };
  }
  if (fresh.length && Object.keys(incomingEnv).length) fresh[0].envelope = incomingEnv;
  return { kind: "ok", fresh, keys, duplicate: fresh.length === 0 };
}
