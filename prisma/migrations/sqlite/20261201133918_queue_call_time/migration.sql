-- Written by hand: the same table as Prisma's redefinition, without copying every row (the new
-- column is last, and SQLite adds a NOT NULL column with a default in place).
ALTER TABLE "operation_views" ADD COLUMN "called_at" TEXT NOT NULL DEFAULT '';

-- CreateIndex
CREATE INDEX "operation_views_needs_review_called_at_created_seq_idx" ON "operation_views"("needs_review", "called_at", "created_seq");

-- Backfill, as lib/store/projection.ts viewRow writes it: the receipt's time, else when the
-- operation was recorded (an intent carries no time of its own).
UPDATE "operation_views" SET "called_at" = COALESCE("receipt_at", "created_at");
