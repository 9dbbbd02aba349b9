-- CreateTable
CREATE TABLE "outcome_rollups" (
    "day" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "effective_outcome" TEXT NOT NULL,
    "needs_review" BOOLEAN NOT NULL,
    "overclaimed" BOOLEAN NOT NULL,
    "operations" INTEGER NOT NULL,

    PRIMARY KEY ("day", "tool", "effective_outcome", "needs_review", "overclaimed")
);

-- CreateTable
CREATE TABLE "receipt_rollups" (
    "day" TEXT NOT NULL PRIMARY KEY,
    "receipts" INTEGER NOT NULL,
    "accepted" INTEGER NOT NULL,
    "silent" INTEGER NOT NULL
);

-- Backfill from the projection (hand-written): from here on writeProjection keeps both tables in
-- step with operation_views in the same transactions, and projections:rebuild recreates them.
INSERT INTO "outcome_rollups" ("day", "tool", "effective_outcome", "needs_review", "overclaimed", "operations")
SELECT substr("created_at", 1, 10), COALESCE("tool", ''), "effective_outcome", "needs_review", "overclaimed", COUNT(*)
  FROM "operation_views"
 GROUP BY substr("created_at", 1, 10), COALESCE("tool", ''), "effective_outcome", "needs_review", "overclaimed";

INSERT INTO "receipt_rollups" ("day", "receipts", "accepted", "silent")
SELECT substr("receipt_at", 1, 10), COUNT(*),
       SUM(CASE WHEN "receipt_status" = 'accepted' THEN 1 ELSE 0 END),
       SUM(CASE WHEN "receipt_status" = 'accepted'
                 AND "reason" IN ('the write was accepted but the canonical effect is absent',
                                  'the write was accepted but canonical state conflicts with the intent')
                THEN 1 ELSE 0 END)
  FROM "operation_views"
 WHERE "receipt_at" IS NOT NULL
 GROUP BY substr("receipt_at", 1, 10);
