import { jsonEqual } from "./hash";
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

/** Keys of `incoming` already set in `current` with a different value: a conflict. */
export function envelopeConflicts(current: Record<string, unknown>, incoming: Record<string, unknown>): string[] {
  return Object.keys(incoming).filter((k) => Object.hasOwn(current, k) && !jsonEqual(current[k], incoming[k]));
}

export type ExistingStage = { stage: Stage; payload: unknown };

export type Reconciled =
  | { kind: "conflict"; message: string; details: unknown }
  | { kind: "ok"; fresh: StageRecordDraft[]; duplicate: boolean };

/**
 * Decides what of a record is new against what the operation already holds (API.md "Ingest"):
 * an identical stage changes nothing; a different intent or receipt, or a different value for
 * an envelope key already set, is a conflict that stores nothing; reads and side-effect
 * observations are appended when different.
 */
export function reconcileRecord(
  raw: Record<string, unknown>,
  existing: ExistingStage[],
  existingEnvelope: Record<string, unknown>,
): Reconciled {
  const incomingEnv = envelopeOf(raw);
  const conflicts = envelopeConflicts(existingEnvelope, incomingEnv);
  if (conflicts.length) {
    return {
      kind: "conflict",
      message: `the operation already has a different value for ${conflicts.join(", ")}`,
      details: { fields: conflicts },
    };
  }
  const drafts = splitRecord(raw);
  const seen = [...existing];
  const fresh: StageRecordDraft[] = [];
  for (const d of drafts) {
    const same = seen.filter((e) => e.stage === d.stage);
    if (d.stage === "intent" || d.stage === "receipt") {
      if (same.length && !jsonEqual(same[0].payload, d.payload)) {
        return {
          kind: "conflict",
          message: `the operation already has a different ${d.stage}; an operation's ${d.stage} is recorded once and never replaced`,
          details: { stage: d.stage },
        };
      }
      if (same.length) continue;
    } else if (same.some((e) => jsonEqual(e.payload, d.payload))) {
      continue;
    }
    fresh.push({ ...d, envelope: null });
    seen.push({ stage: d.stage, payload: d.payload });
  }
  const newKeys = Object.keys(incomingEnv).filter((k) => !(k in existingEnvelope));
  if (fresh.length === 0 && newKeys.length) {
    return {
      kind: "conflict",
      message: `${newKeys.join(", ")} can only be recorded together with a new stage: every stage in this record is already recorded`,
      details: { fields: newKeys },
    };
  }
  if (fresh.length && Object.keys(incomingEnv).length) fresh[0].envelope = incomingEnv;
  return { kind: "ok", fresh, duplicate: fresh.length === 0 };
}
