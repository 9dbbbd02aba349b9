import { z } from "zod";
import { approvalRequestSchema } from "./approval";
import { CALL_KINDS } from "./call-kind";
import { isRfc3339 } from "./time";

/**
 * The ingest wire format (docs/DOMAIN.md "Wire format"). Objects are loose: unknown fields are
 * accepted and kept verbatim in the stored payload, but classification reads only the fields
 * named here. The schema validates; the stored payload is always the raw input, never the
 * parsed copy.
 */

const timestamp = z
  .string()
  .refine(isRfc3339, { message: "must be an RFC 3339 date-time, e.g. 2026-08-28T14:02:11Z" });

const shortText = z.string().max(4096);

/** Ids appear in URLs and filters: printable, no whitespace, no URL delimiters. */
export const operationIdSchema = z
  .string()
  .min(1, "must not be empty")
  .max(200, "must be at most 200 characters")
  .regex(/^[^\s/?#%\\\u0000-\u001f\u007f\p{Cs}]+$/u, "must be printable, without spaces or / ? # % \\")
  // A URL reads these as a step of its path: GET /api/v1/operations/.. is GET /api/v1/.
  .refine((id) => id !== "." && id !== "..", "must not be . or .. (a URL reads those as a step of its path)");

/** Whether a string could be an operation (or trajectory) id at all: lookups of anything else find nothing. */
export function isPossibleOperationId(id: string): boolean {
  return operationIdSchema.safeParse(id).success;
}

/**
 * Any JSON object, kept as received. A check, not `z.record(z.string(), z.unknown())`: that
 * visits and copies every key (half a second for 100,000 keys here), and JSON keys are strings.
 */
const jsonObject = z.custom<Record<string, unknown>>((v) => v !== null && typeof v === "object" && !Array.isArray(v), {
  error: "must be a JSON object",
});

const named = z.union([shortText, z.looseObject({ name: shortText.optional(), version: shortText.optional() })]);

export const intentSchema = z.looseObject({
  target: shortText.optional(),
  effect: shortText.optional(),
  fingerprint: shortText.optional(),
  params: jsonObject.optional(),
  relied_on: z.unknown().optional(),
});

export const receiptStatuses = ["accepted", "rejected"] as const;
export const receiptSchema = z.looseObject({
  status: z.enum(receiptStatuses),
  receipt_id: shortText.nullish(),
  observed_at: timestamp,
  tool: named.nullish(),
  params: jsonObject.nullish(),
  raw: z.unknown().optional(),
  effects: z.array(z.unknown()).nullish(),
  environment: jsonObject.nullish(),
  preconditions_checked: z.array(z.unknown()).nullish(),
  partial: z.boolean().nullish(),
});

export const evidenceSchema = z.union([
  z.string().max(65536),
  z.looseObject({ object_id: shortText.nullish(), fingerprint: shortText.nullish(), url: shortText.nullish() }),
]);

export const readStatuses = ["match", "absent", "mismatch", "unavailable"] as const;
export const canonicalReadSchema = z.looseObject({
  status: z.enum(readStatuses),
  observed_at: timestamp,
  evidence: evidenceSchema.nullish(),
  reader: jsonObject.nullish(),
});

export const sideEffectStatuses = ["observed", "not_observed", "unknown"] as const;
export const sideEffectSchema = z.looseObject({
  name: shortText.min(1, "must not be empty"),
  status: z.enum(sideEffectStatuses),
});

export const idempotencySchema = z.looseObject({
  enforced: z.boolean().nullish(),
  key: shortText.nullish(),
});

export const operationRecordSchema = z
  .looseObject({
    operation_id: operationIdSchema,
    trajectory_id: operationIdSchema.nullish(),
    depends_on: z.array(operationIdSchema).max(1000).nullish(),
    /** Operations this one recovers from (a retry, re-plan or compensation of a detected failure): Metric 5. */
    recovers: z.array(operationIdSchema).max(1000).nullish(),
    agent: named.nullish(),
    tool: named.nullish(),
    claimed_outcome: shortText.nullish(),
    /** What the call does to the world (call-kind.ts): a read is never queued for review; absent, a write. */
    kind: z.enum(CALL_KINDS).nullish(),
    intent: intentSchema.optional(),
    receipt: receiptSchema.optional(),
    canonical_read: z.union([canonicalReadSchema, z.array(canonicalReadSchema).min(1).max(1000)]).optional(),
    side_effects: z.array(sideEffectSchema).max(1000).optional(),
    idempotency: idempotencySchema.nullish(),
    /** A held call's approval request (docs/GATEWAY.md): recorded with its intent, decided in Reconcile. */
    approval: approvalRequestSchema.nullish(),
  })
  .refine((r) => r.approval == null || r.intent !== undefined, { message: "an approval request travels with the intent it holds", path: ["approval"] })
  .refine(
    (r) => r.intent !== undefined || r.receipt !== undefined || r.canonical_read !== undefined || r.side_effects !== undefined,
    { message: "a record must carry at least one stage: intent, receipt, canonical_read or side_effects" },
  );

export type OperationRecord = z.infer<typeof operationRecordSchema>;
export type Intent = z.infer<typeof intentSchema>;
export type Receipt = z.infer<typeof receiptSchema>;
export type CanonicalRead = z.infer<typeof canonicalReadSchema>;
export type SideEffect = z.infer<typeof sideEffectSchema>;
export type Evidence = z.infer<typeof evidenceSchema>;
export type ReadStatus = (typeof readStatuses)[number];

export const STAGE_KEYS = ["intent", "receipt", "canonical_read", "side_effects"] as const;
export type Stage = (typeof STAGE_KEYS)[number];
