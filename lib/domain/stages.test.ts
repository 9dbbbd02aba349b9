import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, chainHash, jsonEqual } from "./hash";
import { envelopeOf, HeldStages, prepareRecord, reconcileRecord, splitRecord, stageChainPayloadCanonical, type Reconciled, type StageRecordDraft } from "./stages";
import type { Stage } from "./wire";

/**
 * The de-duplication rules of API.md "Ingest", decided with sets of canonical JSON
 * (TRUST.md "Cost is linear in the request's size"). The oracle below is the rule as it was
 * first written: every incoming stage compared with every earlier one. It is slow on purpose
 * and must agree with the set-based decision on every batch.
 */
type Held = { stage: Stage; payload: unknown; envelope: Record<string, unknown> | null };

function oracleReconcile(raw: Record<string, unknown>, held: Held[]): Reconciled {
  const existingEnvelope: Record<string, unknown> = {};
  for (const h of held) for (const [k, v] of Object.entries(h.envelope ?? {})) if (!Object.hasOwn(existingEnvelope, k)) existingEnvelope[k] = v;
  const incomingEnv = envelopeOf(raw);
  const conflicts = Object.keys(incomingEnv).filter((k) => Object.hasOwn(existingEnvelope, k) && !jsonEqual(existingEnvelope[k], incomingEnv[k]));
  if (conflicts.length) return { kind: "conflict", message: "", details: { fields: conflicts } };
  const seen = held.map((h) => ({ stage: h.stage, payload: h.payload }));
  const fresh: StageRecordDraft[] = [];
  for (const d of splitRecord(raw)) {
    const same = seen.filter((e) => e.stage === d.stage);
    if (d.stage === "intent" || d.stage === "receipt") {
      if (same.length && !jsonEqual(same[0].payload, d.payload)) return { kind: "conflict", message: "", details: { stage: d.stage } };
      if (same.length) continue;
    } else if (same.some((e) => jsonEqual(e.payload, d.payload))) continue;
    fresh.push({ ...d, envelope: null });
    seen.push({ stage: d.stage, payload: d.payload });
  }
  const newKeys = Object.keys(incomingEnv).filter((k) => !Object.hasOwn(existingEnvelope, k));
  if (fresh.length === 0 && newKeys.length) return { kind: "conflict", message: "", details: { fields: newKeys } };
  if (fresh.length && Object.keys(incomingEnv).length) fresh[0].envelope = incomingEnv;
  return { kind: "ok", fresh, keys: [], duplicate: fresh.length === 0 };
}

/** A batch decided the way ingest decides it: each record against what is held, then accepted. */
function decideBatch(records: Record<string, unknown>[], stored: Held[]) {
  const held = new HeldStages(stored);
  return records.map((r) => {
    const d = reconcileRecord(r, held);
    if (d.kind === "ok") held.accept(d);
    return d;
  });
}

function decideBatchOracle(records: Record<string, unknown>[], stored: Held[]) {
  const held = [...stored];
  return records.map((r) => {
    const d = oracleReconcile(r, held);
    if (d.kind === "ok") for (const f of d.fresh) held.push({ stage: f.stage, payload: f.payload, envelope: f.envelope });
    return d;
  });
}

/** What a decision means, without messages or keys. */
const meaning = (d: Reconciled) =>
  d.kind === "conflict" ? { kind: d.kind, details: d.details } : { kind: d.kind, duplicate: d.duplicate, fresh: d.fresh.map((f) => [f.stage, f.payload, f.envelope]) };

/** The same JSON object with its keys in reverse order: canonically equal, textually not. */
const reversed = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(reversed) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversed(x)])) : v;

const read = (status: string, minute: number, evidence: unknown = { object_id: "o", fingerprint: `f${minute}` }) => ({
  status,
  observed_at: `2026-08-28T10:${String(minute).padStart(2, "0")}:00Z`,
  evidence,
});

describe("set-based de-duplication", () => {
  it("a read repeated within one record, with its keys in another order, is stored once", () => {
    const r = read("match", 1);
    const d = reconcileRecord({ operation_id: "a", canonical_read: [r, reversed(r), read("absent", 2), r] }, new HeldStages());
    expect(meaning(d)).toEqual({ kind: "ok", duplicate: false, fresh: [["canonical_read", r, null], ["canonical_read", read("absent", 2), null]] });
  });

  it("a read repeated across the records of a batch is stored by the first record only", () => {
    const [a, b] = [read("match", 1), read("match", 2)];
    const ds = decideBatch([{ operation_id: "x", canonical_read: [a] }, { operation_id: "x", canonical_read: [reversed(a), b] }, { operation_id: "x", canonical_read: b }], []);
    expect(ds.map(meaning)).toEqual([
      { kind: "ok", duplicate: false, fresh: [["canonical_read", a, null]] },
      { kind: "ok", duplicate: false, fresh: [["canonical_read", b, null]] },
      { kind: "ok", duplicate: true, fresh: [] },
    ]);
  });

  it("a stage already stored is a duplicate; side-effect observations de-duplicate the same way", () => {
    const effects = [{ name: "quota", status: "observed" }];
    const stored: Held[] = [
      { stage: "canonical_read", payload: read("match", 1), envelope: { tool: "t" } },
      { stage: "side_effects", payload: effects, envelope: null },
    ];
    const ds = decideBatch([{ operation_id: "x", tool: "t", canonical_read: reversed(read("match", 1)), side_effects: reversed(effects) }], stored);
    expect(ds.map(meaning)).toEqual([{ kind: "ok", duplicate: true, fresh: [] }]);
  });

  it("intent and receipt: the same one again is a duplicate, a different one a conflict, within a batch as against the store", () => {
    const receipt = { status: "accepted", observed_at: "2026-08-28T10:00:00Z", params: { a: 1, b: 2 } };
    const ds = decideBatch(
      [
        { operation_id: "x", receipt },
        { operation_id: "x", receipt: reversed(receipt) },
        { operation_id: "x", receipt: { ...receipt, params: { a: 1 } } },
        { operation_id: "x", intent: { effect: "one" } },
        { operation_id: "x", intent: { effect: "two" }, canonical_read: read("match", 5) },
      ],
      [],
    );
    expect(ds.map((d) => (d.kind === "ok" ? (d.duplicate ? "duplicate" : "stored") : d.details))).toEqual([
      "stored",
      "duplicate",
      { stage: "receipt" },
      "stored",
      { stage: "intent" },
    ]);
  });

  it("an envelope value already set: the same value passes, another is a conflict, a new key alone with duplicate stages is refused", () => {
    const stored: Held[] = [{ stage: "intent", payload: { effect: "e" }, envelope: { agent: { name: "a", version: "1" } } }];
    const ds = decideBatch(
      [
        { operation_id: "x", agent: { version: "1", name: "a" }, canonical_read: read("match", 1) },
        { operation_id: "x", agent: { name: "b" }, canonical_read: read("match", 2) },
        { operation_id: "x", intent: { effect: "e" }, constructor: 1 },
      ],
      stored,
    );
    expect(ds.map((d) => (d.kind === "ok" ? "stored" : d.details))).toEqual(["stored", { fields: ["agent"] }, { fields: ["constructor"] }]);
  });

  it("agrees with comparing every stage with every other on random batches", () => {
    const payloads = [read("match", 1), read("absent", 1), read("match", 2, "text evidence"), read("unavailable", 3, null)];
    const stageValue = fc.oneof(
      fc.record({ canonical_read: fc.oneof(fc.constantFrom(...payloads), fc.array(fc.constantFrom(...payloads), { minLength: 1, maxLength: 4 })) }),
      fc.record({ intent: fc.constantFrom({ effect: "a" }, { effect: "b" }) }),
      fc.record({ receipt: fc.constantFrom({ status: "accepted", observed_at: "2026-08-28T10:00:00Z" }, { status: "rejected", observed_at: "2026-08-28T10:00:00Z" }) }),
      fc.record({ side_effects: fc.constantFrom([{ name: "q", status: "observed" }], [{ name: "q", status: "unknown" }]) }),
    );
    const envelope = fc.record({ tool: fc.constantFrom("t", "u"), trajectory_id: fc.constantFrom("r1", "r2") }, { requiredKeys: [] });
    const record = fc
      .tuple(fc.array(stageValue, { minLength: 1, maxLength: 3 }), envelope, fc.boolean())
      .map(([stages, env, flip]) => {
        const r = Object.assign({ operation_id: "x" }, env, ...stages) as Record<string, unknown>;
        return flip ? (reversed(r) as Record<string, unknown>) : r;
      });
    const stored = fc.array(
      fc.record({
        stage: fc.constant("canonical_read" as Stage),
        payload: fc.constantFrom(...payloads),
        envelope: fc.option(envelope, { nil: null }),
      }),
      { maxLength: 3 },
    );
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 8 }), stored, (records, held) => {
        expect(decideBatch(records, held).map(meaning)).toEqual(decideBatchOracle(records, held).map(meaning));
      }),
      { numRuns: 500 },
    );
  });

  it("reads each payload once: deciding n reads against n stored ones does n + n canonicalisations, not n × n comparisons", () => {
    let reads = 0;
    // A payload whose `evidence` counts how often anything looks at it.
    const counted = (i: number) => {
      const p = { status: "match", observed_at: "2026-08-28T10:00:00Z" } as Record<string, unknown>;
      Object.defineProperty(p, "evidence", { enumerable: true, get: () => (reads++, `e${i}`) });
      return p;
    };
    const n = 300;
    const stored: Held[] = Array.from({ length: n }, (_, i) => ({ stage: "canonical_read", payload: counted(i), envelope: null }));
    const records = Array.from({ length: n }, (_, i) => ({ operation_id: "x", canonical_read: counted(i + n / 2) }));
    const ds = decideBatch(records, stored);
    expect(ds.filter((d) => d.kind === "ok" && !d.duplicate)).toHaveLength(n / 2);
    expect(reads).toBe(2 * n);
  });
});

describe("the chain hash composed around a payload canonicalised once", () => {
  it("equals canonicalising the whole record, for any stage payload and envelope", () => {
    const text = fc.string({ unit: "grapheme" });
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.option(fc.dictionary(text, fc.jsonValue()), { nil: null }),
        fc.option(text, { nil: null }),
        fc.option(text, { nil: null }),
        fc.nat(),
        fc.option(fc.record({ via: fc.constantFrom("token", "session"), user_id: text, email: text, token_id: fc.option(text, { nil: null }), token_name: fc.option(text, { nil: null }) }), { nil: undefined }),
        (data, envelope, observedAt, actor, seq, sentBy) => {
          const d: StageRecordDraft = { stage: "canonical_read", observed_at: observedAt, payload: data, envelope };
          const payload = { stage: d.stage, observed_at: d.observed_at, data, ...(envelope ? { envelope } : {}), ...(sentBy ? { sent_by: sentBy } : {}) };
          const composed = stageChainPayloadCanonical(d, canonicalJson(data), sentBy ? canonicalJson(sentBy) : undefined);
          expect(composed).toBe(canonicalJson(payload));
          const fields = { seq: seq + 1, kind: "stage" as const, operation_id: "op", recorded_at: "2026-01-01T00:00:00.000Z", actor, payload, prev_hash: "0".repeat(64) };
          expect(chainHash(fields, composed)).toBe(chainHash(fields));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("prepareRecord canonicalises each stage payload of a record", () => {
    const raw = { operation_id: "x", canonical_read: [read("match", 1), read("absent", 2)], intent: { effect: "e" } };
    const p = prepareRecord(raw);
    expect(p.keys).toEqual(p.drafts.map((d) => canonicalJson(d.payload)));
  });
});
