-- CreateTable
CREATE TABLE "verdict_exports" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "operation_id" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "created_at" TEXT NOT NULL,
    "delivered_at" TEXT
);

-- CreateIndex
CREATE INDEX "verdict_exports_created_at_idx" ON "verdict_exports"("created_at");

-- CreateIndex
CREATE INDEX "verdict_exports_status_created_at_idx" ON "verdict_exports"("status", "created_at");
