/**
 * What the model-based test (model.itest.ts) sends, and as whom: small pools of stage payloads
 * (so that duplicates and conflicts happen often), record specs built from them, and the
 * principals of API.md with the scopes their roles allow. The model itself, which decides what
 * the server must answer, is model-domain.ts.
 */

// ---------------------------------------------------------------------------------------------
// JSON equality independent of key order (API.md: "the same content").

function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

export function sameJson(a: unknown, b: unknown): boolean {
  return stable(a) === stable(b);
}

// ---------------------------------------------------------------------------------------------
// A small pool of stage payloads, so that duplicates and conflicts happen often.

const T_BEFORE = "2026-08-28T09:59:00Z";
const T0 = "2026-08-28T10:00:00Z";
const T1 = "2026-08-28T10:05:00Z";
const T_LATE = "2026-08-28T10:07:00Z";
const T2 = "2026-08-28T10:10:00Z";

export const INTENTS = {
  I1: { target: "social account", effect: "publish exactly one post", fingerprint: "sha256:aaa", params: { text: "hello" } },
  I2: { target: "social account", effect: "publish exactly one post", fingerprint: "sha256:bbb", params: { text: "hello!" } },
} as const;

export const RECEIPTS = {
  ACC: { status: "accepted", receipt_id: "rcpt-1", observed_at: T0, params: { text: "hello" } },
  ACC_PARTIAL: { status: "accepted", receipt_id: "rcpt-1", observed_at: T0, partial: true },
  ACC_LATE: { status: "accepted", observed_at: T_LATE },
  REJ: { status: "rejected", receipt_id: "rcpt-9", observed_at: T0 },
} as const;

export const READS = {
  MATCH: { status: "match", observed_at: T1, evidence: { object_id: "obj-1", fingerprint: "sha256:aaa" } },
  MATCH_B: { status: "match", observed_at: T1, evidence: { object_id: "obj-2", fingerprint: "sha256:bbb" } },
  MATCH_STR: { status: "match", observed_at: T2, evidence: "https://social.example/post/1" },
  MATCH_NOEV: { status: "match", observed_at: T1 },
  ABSENT: { status: "absent", observed_at: T1 },
  ABSENT_T2: { status: "absent", observed_at: T2 },
  UNAVAIL: { status: "unavailable", observed_at: T1 },
  MISMATCH: { status: "mismatch", observed_at: T2 },
  STALE: { status: "match", observed_at: T_BEFORE, evidence: { object_id: "obj-0" } },
} as const;

export const SIDE_EFFECTS = {
  SE1: [{ name: "quota decrement", status: "observed" }],
  SE2: [
    { name: "quota decrement", status: "unknown" },
    { name: "index entry", status: "observed" },
  ],
} as const;

export type IntentKey = keyof typeof INTENTS;
export type ReceiptKey = keyof typeof RECEIPTS;
export type ReadKey = keyof typeof READS;
export type SideKey = keyof typeof SIDE_EFFECTS;

/** What a generated record carries; the payloads come from the pools above. */
export type RecordSpec = {
  intent?: IntentKey;
  receipt?: ReceiptKey;
  reads?: ReadKey[];
  /** Send the reads as an array even when there is one. */
  readsArray?: boolean;
  side?: SideKey;
  claimed?: "success" | "failure";
  idempotency?: boolean;
};

export function describeSpec(s: RecordSpec): string {
  const parts: string[] = [];
  if (s.intent) parts.push(s.intent);
  if (s.receipt) parts.push(s.receipt);
  if (s.reads) parts.push(s.readsArray || s.reads.length > 1 ? `[${s.reads.join(",")}]` : s.reads[0]);
  if (s.side) parts.push(s.side);
  if (s.claimed) parts.push(`claimed=${s.claimed}`);
  if (s.idempotency) parts.push("idem");
  return parts.join("+");
}

/** The wire record for a spec (DOMAIN.md "Wire format"). Every record names the run's trajectory. */
export function buildRecord(spec: RecordSpec, operationId: string, trajectoryId: string): Record<string, unknown> {
  const r: Record<string, unknown> = { operation_id: operationId, trajectory_id: trajectoryId };
  if (spec.claimed) r.claimed_outcome = spec.claimed;
  if (spec.idempotency) r.idempotency = { enforced: true, key: `idem-${operationId}` };
  if (spec.intent) r.intent = structuredClone(INTENTS[spec.intent]);
  if (spec.receipt) r.receipt = structuredClone(RECEIPTS[spec.receipt]);
  if (spec.reads?.length) {
    const reads = spec.reads.map((k) => structuredClone(READS[k]));
    r.canonical_read = spec.readsArray || reads.length > 1 ? reads : reads[0];
  }
  if (spec.side) r.side_effects = structuredClone(SIDE_EFFECTS[spec.side]);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Principals: API.md "Authentication".

export type Role = "viewer" | "reviewer" | "admin";
export type Scope = "ingest" | "verify" | "read" | "export" | "review";
export const ACTOR_NAMES = ["ingester", "viewer", "auditor", "reviewerA", "reviewerB", "admin", "flex", "agent"] as const;
export type ActorName = (typeof ACTOR_NAMES)[number];

/** The users the test acts as, their role at the start of every run, and their token's scopes. */
export const ACTORS: Record<ActorName, { role: Role; scopes: Scope[] }> = {
  ingester: { role: "viewer", scopes: ["ingest"] },
  viewer: { role: "viewer", scopes: ["ingest", "read", "export"] },
  auditor: { role: "viewer", scopes: ["read", "export"] },
  reviewerA: { role: "reviewer", scopes: ["review", "read"] },
  reviewerB: { role: "reviewer", scopes: ["review"] },
  admin: { role: "admin", scopes: ["ingest", "verify", "read", "export", "review"] },
  /** Its role is changed during runs (reviewer, viewer, admin): a demoted owner's review token stops reviewing. */
  flex: { role: "reviewer", scopes: ["review", "ingest"] },
  /** An agent that reads back its own writes: ingest and verify (TRUST.md). */
  agent: { role: "reviewer", scopes: ["ingest", "verify", "read"] },
};

const RANK: Record<Role, number> = { viewer: 0, reviewer: 1, admin: 2 };
const SCOPE_MIN_ROLE: Record<Scope, Role> = { ingest: "viewer", verify: "reviewer", read: "viewer", export: "viewer", review: "reviewer" };

/** A token may act when it carries the scope and its owner's current role allows the scope. */
export function mayAct(role: Role, scopes: readonly Scope[], need: Scope): boolean {
  return scopes.includes(need) && RANK[role] >= RANK[SCOPE_MIN_ROLE[need]];
}
