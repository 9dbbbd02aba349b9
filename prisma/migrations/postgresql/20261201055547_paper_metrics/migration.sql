-- AlterTable
ALTER TABLE "operation_views" ADD COLUMN     "actual" TEXT NOT NULL DEFAULT 'unknown',
ADD COLUMN     "audit_sample" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "fingerprint" TEXT,
ADD COLUMN     "recovered" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "review" TEXT NOT NULL DEFAULT 'none';

-- CreateTable
CREATE TABLE "metric_rollups" (
    "day" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "agent" TEXT NOT NULL,
    "claim" TEXT NOT NULL,
    "actual" TEXT NOT NULL,
    "accepted" BOOLEAN NOT NULL,
    "verdict" TEXT NOT NULL,
    "review" TEXT NOT NULL,
    "recovered" BOOLEAN NOT NULL,
    "sampled" BOOLEAN NOT NULL,
    "operations" INTEGER NOT NULL,

    CONSTRAINT "metric_rollups_pkey" PRIMARY KEY ("day","tool","agent","claim","actual","accepted","verdict","review","recovered","sampled")
);

-- CreateTable
CREATE TABLE "operation_recovers" (
    "operation_id" TEXT NOT NULL,
    "recovers" TEXT NOT NULL,

    CONSTRAINT "operation_recovers_pkey" PRIMARY KEY ("operation_id","recovers")
);

-- CreateTable
CREATE TABLE "audit_sampling" (
    "tool" TEXT NOT NULL,
    "rate" DOUBLE PRECISION NOT NULL,
    "updated_at" TEXT NOT NULL,
    "updated_by" TEXT NOT NULL,

    CONSTRAINT "audit_sampling_pkey" PRIMARY KEY ("tool")
);

-- CreateTable
CREATE TABLE "audit_samples" (
    "operation_id" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "rate" DOUBLE PRECISION NOT NULL,
    "drawn_at" TEXT NOT NULL,

    CONSTRAINT "audit_samples_pkey" PRIMARY KEY ("operation_id")
);

-- CreateIndex
CREATE INDEX "operation_recovers_recovers_idx" ON "operation_recovers"("recovers");

-- json, not jsonb: jsonb refuses a \u0000 escape anywhere in a payload.
UPDATE "operation_views" SET "fingerprint" = (
  SELECT NULLIF(c."payload"::json -> 'data' ->> 'fingerprint', '') FROM "chain_records" c
   WHERE c."operation_id" = "operation_views"."operation_id" AND c."kind" = 'stage' AND c."stage" = 'intent'
   ORDER BY c."seq" LIMIT 1);

-- Backfill (hand-written): the metric columns from what operation_views already holds, then the
-- rollup. From here on writeProjection keeps them (lib/store/metrics-projection.ts) and
-- projections:rebuild recreates them. Records stored before this version that carried a
-- `recovers` field (then an unknown, unread field) count as recoveries after projections:rebuild.
-- Exactly lib/domain/metrics.ts reviewOf over lib/domain/corrections.ts replayCorrections: a
-- resolve is in effect when it is the last correction (retract and reopen both end one); a
-- withdrawn claim stays withdrawn, and with no resolve in effect the outcome is then divergent.
UPDATE "operation_views" SET "review" = CASE
  WHEN "correction_count" = 0 THEN 'none'
  WHEN (SELECT c."payload"::json ->> 'action' FROM "chain_records" c
         WHERE c."operation_id" = "operation_views"."operation_id" AND c."kind" = 'correction'
         ORDER BY c."seq" DESC LIMIT 1) = 'resolve' THEN "effective_outcome"
  WHEN "effective_outcome" = 'divergent' AND EXISTS (
    SELECT 1 FROM "chain_records" c
     WHERE c."operation_id" = "operation_views"."operation_id" AND c."kind" = 'correction'
       AND c."payload"::json ->> 'action' = 'retract') THEN 'retracted'
  ELSE 'none' END;

UPDATE "operation_views" SET "actual" = CASE
  WHEN "review" IN ('verified', 'compensated') THEN 'held'
  WHEN "review" IN ('not_applied', 'retracted') THEN 'not_held'
  WHEN "effective_outcome" IN ('verified', 'compensated') THEN 'held'
  WHEN "effective_outcome" = 'divergent' AND "reason" = 'the write was rejected but the canonical effect is present' THEN 'held'
  WHEN "effective_outcome" IN ('divergent', 'not_applied', 'rejected') THEN 'not_held'
  ELSE 'unknown' END;

UPDATE "operation_views" SET "recovered" = true
 WHERE "outcome" IN ('divergent', 'rejected')
   AND ("review" = 'compensated' OR EXISTS (
        SELECT 1 FROM "operation_views" y
         WHERE y."trajectory_id" = "operation_views"."trajectory_id" AND y."tool" = "operation_views"."tool"
           AND y."fingerprint" = "operation_views"."fingerprint" AND y."effective_outcome" = 'verified'
           AND y."created_seq" > "operation_views"."created_seq"));

INSERT INTO "metric_rollups" ("day", "tool", "agent", "claim", "actual", "accepted", "verdict", "review", "recovered", "sampled", "operations")
SELECT substr("created_at", 1, 10), COALESCE("tool", ''), COALESCE("agent", ''),
       CASE WHEN "claimed_outcome" IS NULL THEN 'none' WHEN "claimed_outcome" = 'success' THEN 'success' ELSE 'other' END,
       "actual", COALESCE("receipt_status" = 'accepted', false), "outcome", "review", "recovered", "audit_sample", COUNT(*)
  FROM "operation_views"
 GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10;
