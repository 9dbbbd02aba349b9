-- CreateTable
CREATE TABLE "job" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "kind" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "due_at" BIGINT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lease_owner" TEXT,
    "lease_until" BIGINT,
    "last_error" TEXT,
    "created_at" BIGINT NOT NULL,
    "finished_at" BIGINT
);

-- CreateIndex
CREATE UNIQUE INDEX "job_key_key" ON "job"("key");

-- CreateIndex
CREATE INDEX "job_status_due_at_idx" ON "job"("status", "due_at");
