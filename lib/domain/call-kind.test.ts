import { describe, expect, it } from "vitest";
import { deriveOperation, type StoredStage } from "./operation";
import { metricFacts, metricPart } from "./metrics";
import { operationRecordSchema } from "./wire";
import { RETRY_DECISIONS } from "./outcomes";
import { CALL_KINDS, callKindOf } from "./call-kind";

const T0 = "2026-08-28T10:00:00Z";
const T1 = "2026-08-28T10:05:00Z";

/** One operation from a wire record, through the real derivation (envelope on the first stage, as ingest stores it). */
function derive(record: Record<string, unknown>) {
  expect(operationRecordSchema.safeParse({ operation_id: "op", ...record }).success).toBe(true);
  const { intent, receipt, canonical_read, ...envelope } = record;
  const out: StoredStage[] = [];
  let seq = 1;
  const push = (stage: StoredStage["stage"], data: unknown, observed: string | null) =>
    out.push({ seq: seq++, stage, observed_at: observed, recorded_at: T1, data, envelope: out.length ? null : envelope });
  if (intent) push("intent", intent, null);
  if (receipt) push("receipt", receipt, T0);
  if (canonical_read) push("canonical_read", canonical_read, T1);
  return deriveOperation("op", out);
}

const intent = { target: "fs", effect: "call read_file on fs", params: { path: "a.txt" } };
const accepted = { status: "accepted", observed_at: T0 };

describe("a call's kind: read, idempotent or write (the gateway's rule, or the upstream's annotations)", () => {
  it("the wire takes one of the three, and nothing else", () => {
    for (const kind of CALL_KINDS) expect(operationRecordSchema.safeParse({ operation_id: "op", kind, intent }).success).toBe(true);
    const bad = operationRecordSchema.safeParse({ operation_id: "op", kind: "delete", intent });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0].path).toEqual(["kind"]);
    expect(callKindOf({})).toBe("write");
    expect(callKindOf({ kind: "read" })).toBe("read");
    expect(callKindOf({ kind: "nonsense" })).toBe("write");
  });

  it("a write without a canonical read is uncertain and goes to review, as before", () => {
    const op = derive({ intent, receipt: accepted });
    expect(op.effective_outcome).toBe("uncertain");
    expect(op.needs_review).toBe(true);
    expect(op.kind).toBe("write");
  });

  it("a read is never queued for review and never counted in Metric 2", () => {
    const op = derive({ kind: "read", intent, receipt: accepted });
    expect(op.kind).toBe("read");
    expect(op.effective_outcome).toBe("uncertain");
    expect(op.needs_review).toBe(false);
    const facts = metricFacts(op, { recovered: false, sampled: false });
    expect(metricPart("silent_failure_rate", facts)).toBeNull();
    // A write with the same records is in Metric 2 (its truth unknown).
    expect(metricPart("silent_failure_rate", metricFacts(derive({ intent, receipt: accepted }), { recovered: false, sampled: false }))).toBe("unknown");
  });

  it("an idempotent call's uncertainty is not queued for review, and its retry decision says a repeat is safe; divergent still is", () => {
    const uncertain = derive({ kind: "idempotent", intent, receipt: accepted });
    expect(uncertain.needs_review).toBe(false);
    expect(uncertain.retry).toEqual({ automatic: false, safe_replay_available: true, decision: RETRY_DECISIONS.idempotent });
    const divergent = derive({ kind: "idempotent", intent, receipt: accepted, canonical_read: { status: "absent", observed_at: T1 } });
    expect(divergent.effective_outcome).toBe("divergent");
    expect(divergent.needs_review).toBe(true);
    expect(divergent.retry.safe_replay_available).toBe(true);
    // Verified stays "do not retry".
    const verified = derive({ kind: "idempotent", intent, receipt: accepted, canonical_read: { status: "match", observed_at: T1, evidence: { object_id: "x" } } });
    expect(verified.retry.decision).toBe(RETRY_DECISIONS.verified);
  });

  it("an agent's success claim on a read that is not verified is still an overclaim, counted in Metric 1", () => {
    const op = derive({ kind: "read", intent, receipt: accepted, claimed_outcome: "success" });
    expect(op.overclaimed).toBe(true);
  });
});
