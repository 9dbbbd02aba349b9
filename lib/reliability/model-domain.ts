/**
 * A small in-memory model of docs/DOMAIN.md and docs/API.md, for the model-based test
 * (model.itest.ts). It is written from the documents, not from the implementation: what an
 * operation holds (its stage records, first write wins per stage, identical re-sends are
 * duplicates, a different intent or receipt is a conflict), the corrections in order and
 * what each may do, who may do what, and how many chain records each act adds.
 *
 * Only the classification of a set of stage records is taken from the app (`classify`, unit
 * tested on its own); everything around it — idempotency, conflicts, correction rules, replay,
 * needs-review, retry decisions, permissions, the chain — is modelled here independently.
 */
import { classify, type StageFact } from "@/lib/domain/classify";
import { ACTOR_NAMES, ACTORS, sameJson, type ActorName, type Role } from "./model-inputs";

// ---------------------------------------------------------------------------------------------
// The model.

export type StageName = "intent" | "receipt" | "canonical_read" | "side_effects";
export type Resolution = "verified" | "not_applied" | "compensated";
export type Action = "resolve" | "retract" | "reopen";
export type Effective = "rejected" | "uncertain" | "divergent" | "verified" | "not_applied" | "compensated";

export type ModelStage = { stage: StageName; payload: unknown; actor: string; envelope: Record<string, unknown> | null };
export type ModelCorrection = {
  id: string;
  action: Action;
  outcome: Resolution | null;
  /** A resolve that also withdrew the agent's success claim (absent otherwise, as the API shows it). */
  withdraw_claim?: true;
  outcome_seen: Effective;
  reviewer: string;
  follows: string | null;
};
/** One chain record of an operation, in chain order (stage records and corrections interleaved). */
export type LogEntry =
  | { kind: "stage"; stage: StageName; payload: unknown; actor: string }
  | { kind: "correction"; id: string; action: Action; outcome: Resolution | null; actor: string };
/** `owner`: the email of the actor whose record created it (TRUST.md "Who may write what"). */
export type ModelOp = { stages: ModelStage[]; corrections: ModelCorrection[]; log: LogEntry[]; owner?: string };

export type Model = {
  ops: Record<string, ModelOp>;
  /** Chain records added since the run began (stage records, corrections, security events). */
  added: number;
  /** Security events of the run, as `actor|type|detail`. */
  security: string[];
  roles: Record<ActorName, Role>;
  /**
   * Until then (ms since epoch) flex's review permission may still be the one before its last
   * role change: the server remembers a token's owner for a few seconds (API.md: other
   * instances see a change "within the TTL"; the test changes the role from its own process).
   */
  flexAmbiguousUntil: number;
};

export function emptyModel(): Model {
  return {
    ops: {},
    added: 0,
    security: [],
    roles: Object.fromEntries(ACTOR_NAMES.map((a) => [a, ACTORS[a].role])) as Record<ActorName, Role>,
    flexAmbiguousUntil: 0,
  };
}

export function opOf(m: Model, id: string): ModelOp {
  return (m.ops[id] ??= { stages: [], corrections: [], log: [] });
}

export function exists(m: Model, id: string): boolean {
  return (m.ops[id]?.stages.length ?? 0) > 0;
}

/** The operation's envelope: the first value received for each key (DOMAIN.md "Stage records"). */
export function envelopeOf(op: ModelOp): Record<string, unknown> {
  const env: Record<string, unknown> = {};
  for (const s of op.stages) for (const [k, v] of Object.entries(s.envelope ?? {})) if (!(k in env)) env[k] = v;
  return env;
}

export type Derived = {
  outcome: string;
  reason: string;
  failure_category: number | null;
  effective: Effective;
  claim_withdrawn: boolean;
  resolved_from: Effective | null;
  overclaimed: boolean;
  needs_review: boolean;
  retry: { automatic: false; safe_replay_available: boolean; decision: string };
  claimed: string | null;
  envelope: Record<string, unknown>;
};

/** DOMAIN.md "Retry decision" and the decisions after corrections, word for word. */
function retryFor(outcome: Effective, idempotency: unknown): Derived["retry"] {
  const idem = idempotency as { enforced?: unknown; key?: unknown } | null | undefined;
  switch (outcome) {
    case "verified":
      return { automatic: false, safe_replay_available: false, decision: "do not retry: the effect is verified" };
    case "rejected":
      return { automatic: false, safe_replay_available: false, decision: "a new operation may be justified by new evidence" };
    case "not_applied":
      return { automatic: false, safe_replay_available: false, decision: "a new operation may be issued" };
    case "compensated":
      return { automatic: false, safe_replay_available: false, decision: "do not retry: the effect was compensated" };
    case "uncertain":
    case "divergent":
      return {
        automatic: false,
        safe_replay_available: idem?.enforced === true && typeof idem.key === "string" && idem.key.length > 0,
        decision: "blocked until canonical state is reconciled",
      };
  }
}

/** Classification (the app's pure classify) plus the corrections replayed in order. */
export function derive(op: ModelOp): Derived {
  const envelope = envelopeOf(op);
  const facts = op.stages.map((s, i) => ({ stage: s.stage, seq: i + 1, payload: s.payload })) as StageFact[];
  const c = classify({ tool: envelope.tool, idempotency: envelope.idempotency as never, stages: facts });
  // DOMAIN.md: "the classification, then the corrections in order: resolve sets its outcome;
  // retract sets divergent (and records that the success claim was withdrawn); reopen returns
  // to the outcome from before the latest resolve."
  let outcome: Effective = c.outcome;
  let withdrawn = false;
  // The resolve in effect withdrew the claim: "a reopen returns to before the resolve, a claim it withdrew included".
  let byResolve = false;
  let from: Effective | null = null;
  for (const k of op.corrections) {
    if (k.action === "resolve") {
      from = outcome;
      outcome = k.outcome!;
      // "A resolve may also withdraw the claim."
      byResolve = k.withdraw_claim === true && !withdrawn;
      if (k.withdraw_claim) withdrawn = true;
    } else if (k.action === "retract") {
      outcome = "divergent";
      withdrawn = true;
      byResolve = false;
      from = null;
    } else {
      outcome = from ?? outcome;
      if (byResolve) withdrawn = false;
      byResolve = false;
      from = null;
    }
  }
  const claimed = typeof envelope.claimed_outcome === "string" ? envelope.claimed_outcome : null;
  // DOMAIN.md "False claims": the agent claimed success and the claim is withdrawn, or the
  // outcome is uncertain, divergent, rejected or not_applied; it stays counted after review.
  const overclaimed = claimed === "success" && (withdrawn || ["uncertain", "divergent", "rejected", "not_applied"].includes(outcome));
  // Needs a person: uncertain, divergent, or rejected while the success claim stands.
  const standing = claimed === "success" && !withdrawn;
  return {
    outcome: c.outcome,
    reason: c.reason,
    failure_category: c.failure_category,
    effective: outcome,
    claim_withdrawn: withdrawn,
    resolved_from: from,
    overclaimed,
    needs_review: outcome === "uncertain" || outcome === "divergent" || (outcome === "rejected" && standing),
    retry: retryFor(outcome, envelope.idempotency),
    claimed,
    envelope,
  };
}

// ---------------------------------------------------------------------------------------------
// Ingest (API.md "Ingest"): first write wins per stage.

const STAGE_KEYS = new Set(["intent", "receipt", "canonical_read", "side_effects"]);

export type IngestVerdict =
  /** A different intent or receipt, or a different value for an envelope key already set: nothing stored. */
  | { kind: "conflict" }
  | { kind: "stored"; created: boolean; duplicate: boolean; fresh: number }
  /**
   * Every stage is already recorded but the record brings an envelope key the operation lacks.
   * The documents do not say (the envelope lives inside a stage record, and there is no new
   * one): a duplicate or a conflict are both accepted, as long as nothing is stored.
   */
  | { kind: "duplicate-or-conflict" };

/**
 * TRUST.md "Who may write what", written from the document: reads need verify; intent, receipt
 * and envelope need ingest; an operation someone else created takes reads and side effects from
 * a verifier, anything from an admin, nothing from anyone else. The code of the 403, or null.
 */
export function trustRefusal(
  m: Model,
  operationId: string,
  raw: Record<string, unknown>,
  actor: string,
  may: { ingest: boolean; verify: boolean; admin: boolean },
): "verify_scope_required" | "forbidden" | "not_operation_owner" | null {
  const observationsOnly = Object.keys(raw).every((k) => k === "operation_id" || k === "canonical_read" || k === "side_effects");
  if (raw.canonical_read !== undefined && !may.verify) return "verify_scope_required";
  if (!may.ingest && !observationsOnly) return "forbidden";
  const owner = exists(m, operationId) ? m.ops[operationId].owner : undefined;
  if (owner === undefined || owner === actor || may.admin || (may.verify && observationsOnly)) return null;
  return "not_operation_owner";
}

/** Decides a record against the model and, when it stores something, records it (mutates m). */
export function ingestRecord(m: Model, operationId: string, raw: Record<string, unknown>, actor: string): IngestVerdict {
  const op = opOf(m, operationId);
  const current = envelopeOf(op);
  const incoming: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) if (k !== "operation_id" && !STAGE_KEYS.has(k)) incoming[k] = v;
  for (const [k, v] of Object.entries(incoming)) if (k in current && !sameJson(current[k], v)) return { kind: "conflict" };

  const drafts: { stage: StageName; payload: unknown }[] = [];
  if (raw.intent !== undefined) drafts.push({ stage: "intent", payload: raw.intent });
  if (raw.receipt !== undefined) drafts.push({ stage: "receipt", payload: raw.receipt });
  if (raw.canonical_read !== undefined) {
    for (const r of Array.isArray(raw.canonical_read) ? raw.canonical_read : [raw.canonical_read]) drafts.push({ stage: "canonical_read", payload: r });
  }
  if (raw.side_effects !== undefined) drafts.push({ stage: "side_effects", payload: raw.side_effects });

  const held = op.stages.map((s) => ({ stage: s.stage, payload: s.payload }));
  const fresh: { stage: StageName; payload: unknown }[] = [];
  for (const d of drafts) {
    const same = held.filter((h) => h.stage === d.stage);
    if (d.stage === "intent" || d.stage === "receipt") {
      // Recorded once and never replaced.
      if (same.length && !sameJson(same[0].payload, d.payload)) return { kind: "conflict" };
      if (same.length) continue;
    } else if (same.some((h) => sameJson(h.payload, d.payload))) {
      // An observation already recorded with the same content changes nothing.
      continue;
    }
    fresh.push(d);
    held.push(d);
  }
  const newKeys = Object.keys(incoming).filter((k) => !(k in current));
  if (!fresh.length && newKeys.length) return { kind: "duplicate-or-conflict" };
  const created = op.stages.length === 0 && fresh.length > 0;
  if (created) op.owner = actor;
  fresh.forEach((d, i) => {
    op.stages.push({ stage: d.stage, payload: d.payload, actor, envelope: i === 0 && Object.keys(incoming).length ? incoming : null });
    op.log.push({ kind: "stage", stage: d.stage, payload: d.payload, actor });
  });
  m.added += fresh.length;
  return { kind: "stored", created, duplicate: fresh.length === 0, fresh: fresh.length };
}

// ---------------------------------------------------------------------------------------------
// Corrections (DOMAIN.md "Corrections", API.md "Corrections").

export type CorrectionBody = {
  action: Action;
  outcome?: Resolution;
  withdraw_claim?: boolean;
  reason: string;
  evidence?: { object_id?: string; url?: string; fingerprint?: string };
  expected_last_correction_id?: string | null;
};

/** Evidence for a reviewer's verified: an object with a non-empty object_id, url or fingerprint. */
function reviewEvidence(e: CorrectionBody["evidence"]): boolean {
  return !!e && [e.object_id, e.url, e.fingerprint].some((v) => typeof v === "string" && v.length > 0);
}

/**
 * Retract: "a success that was overclaimed: an operation that was verified (by rule or by a
 * reviewer) whose evidence turns out wrong, or whose agent claimed success while the outcome is
 * not verified". Not verified includes not_applied and compensated: a reviewer's resolution
 * settles the effect, not the agent's claim. A claim already withdrawn is not withdrawn twice.
 */
function mayRetract(d: Derived): boolean {
  // DOMAIN.md: verified, or the agent claimed success while the outcome is not verified (and the
  // claim has not been withdrawn already).
  return d.effective === "verified" || (d.claimed === "success" && !d.claim_withdrawn);
}

export type CorrectionVerdict = { status: 404 | 409 | 422 | 201; why: string };

/** What the server must answer to a permitted correction request, in API.md's order. */
export function decideCorrection(m: Model, operationId: string, body: CorrectionBody): CorrectionVerdict {
  if (!exists(m, operationId)) return { status: 404, why: "no such operation" };
  const op = m.ops[operationId];
  const last = op.corrections.at(-1)?.id ?? null;
  const expected = body.expected_last_correction_id ?? null;
  // "This check comes before the rules."
  if (expected !== last) return { status: 409, why: `expected ${expected}, latest is ${last}` };
  const d = derive(op);
  switch (body.action) {
    case "resolve": {
      const rejectedClaim = d.effective === "rejected" && d.claimed === "success" && !d.claim_withdrawn;
      if (d.effective !== "uncertain" && d.effective !== "divergent" && !rejectedClaim) return { status: 422, why: `resolve of ${d.effective}` };
      if (!body.outcome) return { status: 422, why: "resolve without an outcome" };
      if (body.outcome === "verified" && !reviewEvidence(body.evidence)) return { status: 422, why: "verified without evidence" };
      if (body.withdraw_claim && (d.claimed !== "success" || d.claim_withdrawn || body.outcome === "verified")) return { status: 422, why: "withdraw_claim without a standing claim, or with verified" };
      return { status: 201, why: body.withdraw_claim ? "resolve, claim withdrawn" : "resolve" };
    }
    case "retract":
      if (body.withdraw_claim) return { status: 422, why: "withdraw_claim with a retract" };
      return mayRetract(d) ? { status: 201, why: "retract" } : { status: 422, why: `retract of ${d.effective}${d.claimed ? ` claimed ${d.claimed}` : ""}${d.claim_withdrawn ? " (withdrawn)" : ""}` };
    case "reopen":
      if (body.withdraw_claim) return { status: 422, why: "withdraw_claim with a reopen" };
      return d.resolved_from !== null ? { status: 201, why: "reopen" } : { status: 422, why: "reopen without a resolve in effect" };
  }
}

/** Records an accepted correction (its id is the server's). */
export function appendCorrection(m: Model, operationId: string, body: CorrectionBody, id: string, reviewer: string): ModelCorrection {
  const op = m.ops[operationId];
  const c: ModelCorrection = {
    id,
    action: body.action,
    outcome: body.action === "resolve" ? body.outcome! : null,
    ...(body.action === "resolve" && body.withdraw_claim === true ? { withdraw_claim: true as const } : {}),
    outcome_seen: derive(op).effective,
    reviewer,
    follows: op.corrections.at(-1)?.id ?? null,
  };
  op.corrections.push(c);
  op.log.push({ kind: "correction", id, action: c.action, outcome: c.outcome, actor: reviewer });
  m.added += 1;
  return c;
}
