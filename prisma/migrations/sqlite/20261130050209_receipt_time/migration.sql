-- AlterTable
ALTER TABLE "operation_views" ADD COLUMN "receipt_at" TEXT;

-- CreateIndex
CREATE INDEX "operation_views_receipt_at_idx" ON "operation_views"("receipt_at");
