-- CreateTable
CREATE TABLE "operation_approvals" (
    "operation_id" TEXT NOT NULL,
    "created_seq" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "tool" TEXT,
    "rule" TEXT NOT NULL,
    "requested_at" TEXT NOT NULL,
    "expires_at" TEXT NOT NULL,
    "decided_by" TEXT,
    "decided_at" TEXT,
    "used_at" TEXT,

    CONSTRAINT "operation_approvals_pkey" PRIMARY KEY ("operation_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "operation_approvals_created_seq_key" ON "operation_approvals"("created_seq");

-- CreateIndex
CREATE INDEX "operation_approvals_status_requested_at_idx" ON "operation_approvals"("status", "requested_at");

-- CreateIndex
CREATE INDEX "operation_approvals_status_expires_at_idx" ON "operation_approvals"("status", "expires_at");
