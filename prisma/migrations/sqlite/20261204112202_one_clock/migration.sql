-- One clock for every figure counted by day: the call's time (called_at). receipt_rollups (the
-- overview's silent-failure series by the receipt's day) is gone; the overview reads Metric 2
-- from metric_rollups, as /metrics does. The receipt_at index served only the list's
-- called_since, which now filters called_at.
-- DropIndex
DROP INDEX "operation_views_receipt_at_idx";

-- DropTable
PRAGMA foreign_keys=off;
DROP TABLE "receipt_rollups";
PRAGMA foreign_keys=on;

-- CreateIndex
CREATE INDEX "operation_views_called_at_idx" ON "operation_views"("called_at");

-- Both rollups re-counted from operation_views by the day of the call, as writeProjection now
-- keeps them (lib/store/projection/projection.ts updateRollups, metrics-projection.ts rollupKey).
DELETE FROM "outcome_rollups";
INSERT INTO "outcome_rollups" ("day", "tool", "effective_outcome", "needs_review", "overclaimed", "operations")
SELECT substr("called_at", 1, 10), COALESCE("tool", ''), "effective_outcome", "needs_review", "overclaimed", COUNT(*)
  FROM "operation_views" GROUP BY 1, 2, 3, 4, 5;

DELETE FROM "metric_rollups";
INSERT INTO "metric_rollups" ("day", "tool", "agent", "claim", "actual", "accepted", "verdict", "review", "recovered", "sampled", "operations")
SELECT substr("called_at", 1, 10), COALESCE("tool", ''), COALESCE("agent", ''),
       CASE WHEN "claimed_outcome" IS NULL THEN 'none' WHEN "claimed_outcome" = 'success' THEN 'success' ELSE 'other' END,
       "actual", CASE WHEN "receipt_status" = 'accepted' THEN 1 ELSE 0 END, "outcome", "review", "recovered", "audit_sample", COUNT(*)
  FROM "operation_views" GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10;
